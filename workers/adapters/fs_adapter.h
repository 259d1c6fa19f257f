// The fs adapter: the system under test is a command-line program acting on
// directory trees (a file synchronizer), not a server. Requests are
// operations on the job's replicas — write, append, mkdir, rmdir, delete,
// rename, symlink, chmod, touch, list —
// and `run`, which runs the target's command (its launch template) to the
// end, with a timeout. Every request is carried out when it is sent and
// answered at once, in order, whatever connection it came on; the IR is in
// docs/adapters.md. Paths stay inside their replica: absolute paths, `..`,
// empty components and paths through a symbolic link are refused (an error
// of the job, not a finding), as are link targets that could lead out, and
// sizes are bounded (FsLimits).
#ifndef DUALSWARM_WORKERS_ADAPTERS_FS_ADAPTER_H_
#define DUALSWARM_WORKERS_ADAPTERS_FS_ADAPTER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {

// What the fs adapter bounds (each bound hit is a job error naming it).
struct FsLimits {
  size_t max_path_bytes = 255;
  size_t max_depth = 8;  // components of a path
  size_t max_data_bytes = 64 * 1024;
  size_t max_entries = 1000;            // in one list
  size_t max_list_bytes = 1024 * 1024;  // file contents in one list
  size_t max_output_bytes = 4096;       // of a run's output, kept in its answer
};

struct FsConfig {
  // The job's directory: the replicas are its subdirectories, created empty.
  std::string root;
  std::vector<std::string> replicas = {"a", "b"};
  // Run by /bin/sh in `root` for each `run` request, after replacing {dir}
  // with root and {R} with root/R for each replica R.
  std::string command;
  int run_timeout_ms = 10000;  // a run still going then is killed
  FsLimits limits;
  // Not empty: the command runs as this user (and its primary group), who
  // owns `root`, the replicas and everything the tester makes in them, so
  // that mode bits bind the program (root ignores them). Needs root, or the
  // tester's own user.
  std::string run_as;
};

// Creates the replicas (InvalidArgument for a replica name other than 1-16
// of [a-z0-9], a root that is not an empty directory, or a `run_as` user
// that does not exist or that the tester cannot become).
absl::StatusOr<std::unique_ptr<Adapter>> MakeFsAdapter(const FsConfig& config);

// The command a run executes: `command` with the placeholders replaced.
std::string FsCommandLine(const FsConfig& config);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_FS_ADAPTER_H_
