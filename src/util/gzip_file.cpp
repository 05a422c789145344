#include "util/gzip_file.h"

#include <zlib.h>

#include "util/atomic_file.h"
#include "util/error.h"

namespace yoke {

void write_gzip_atomically(const std::string& path, const std::string& bytes) {
  z_stream z{};
  // 15 + 16: a gzip wrapper; zlib writes its header with time stamp 0 and no name.
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw input_error(path, 0, "cannot start gzip compression");
  std::string out(deflateBound(&z, uLong(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw input_error(path, 0, "gzip compression failed");
  write_file_atomically(path, out);
}

}  // namespace yoke
