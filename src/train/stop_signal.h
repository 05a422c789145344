// Ctrl-C and SIGTERM ask the training loop to save and stop after the current update.
#pragma once

namespace yoke {

// Installs SIGINT/SIGTERM handlers that ask the loop to save and stop (a second signal exits).
void install_stop_handlers();
bool stop_requested();
// The signal that asked to stop (SIGINT, SIGTERM), 0 if none: a command exits with 128 + it.
int stop_signal();

}  // namespace yoke
