// The last bytes of a file, read with a seek: a log a SUT or a tester wrote
// may be gigabytes, and only its tail goes into an error message. Used for
// sut.log (workers/sut/launcher.h) and a job's tester.log
// (workers/daemon/job_process.h).
#ifndef DUALSWARM_UTIL_FILE_TAIL_H_
#define DUALSWARM_UTIL_FILE_TAIL_H_

#include <errno.h>

#include <cstring>
#include <fstream>
#include <ios>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::util {

// The last `max_bytes` of the file at `path` (all of it when smaller).
// NOT_FOUND when it does not exist; another error when it cannot be opened
// or is not seekable.
inline absl::StatusOr<std::string> ReadFileTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    int err = errno;
    std::string why = absl::StrCat("cannot open ", path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(why) : absl::FailedPreconditionError(why);
  }
  std::streamoff size = in.tellg();
  if (size < 0) return absl::FailedPreconditionError(absl::StrCat("cannot seek in ", path));
  const auto max = static_cast<std::streamoff>(max_bytes);
  std::streamoff from = size > max ? size - max : 0;
  in.seekg(from);
  std::string s(static_cast<size_t>(size - from), '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));  // the file may have shrunk meanwhile
  return s;
}

}  // namespace dualswarm::util

#endif  // DUALSWARM_UTIL_FILE_TAIL_H_
