#include "util/version.h"

#include "yoke_version.h"  // generated: build/generated/

namespace yoke {

const char* yoke_version() { return YOKE_VERSION; }
const char* build_commit() { return YOKE_COMMIT; }

}  // namespace yoke
