// Tiny flag parser shared by the CLI subcommands: "--name value",
// "--name=value" and boolean "--flag"; unknown flags are errors.
#ifndef DUALSWARM_CLI_FLAGS_H_
#define DUALSWARM_CLI_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "workers/runner/runner.h"

namespace dualswarm::cli {

using FlagMap = std::map<std::string, std::string>;

bool ParseFlags(const std::vector<std::string>& args, const std::vector<std::string>& with_value,
                const std::vector<std::string>& bool_flags, FlagMap* out, std::string* err);

// Prints "dualswarm: MSG" to stderr and returns the bad-input exit code.
int BadInput(const std::string& msg);

bool WantsHelp(const std::vector<std::string>& args);

// The adapter's own flags into o->adapter_config: --descriptor-set FILE
// (the grpc adapter needs it, the others refuse it) and --run-as USER (fs
// only); an exit code when one is missing, refused or unreadable. Call
// after o->adapter is set.
std::optional<int> AdapterConfigFromFlags(FlagMap& f, workers::JobOptions* o);

// Reads integer flag `name` into *out when it is given (leaves *out alone
// otherwise); false with *err set when it is not an integer in [lo, hi].
template <typename T>
bool NumFlag(const FlagMap& f, const char* name, int64_t lo, int64_t hi, T* out, std::string* err) {
  auto it = f.find(name);
  if (it == f.end()) return true;
  int64_t v;
  if (!absl::SimpleAtoi(it->second, &v) || v < lo || v > hi) {
    *err = absl::StrCat("--", name, " must be an integer between ", lo, " and ", hi);
    return false;
  }
  *out = static_cast<T>(v);
  return true;
}

}  // namespace dualswarm::cli

#endif  // DUALSWARM_CLI_FLAGS_H_
