// Command-line spelling for the abseil-flags binaries (dualswarm-coordinator,
// dualswarm-worker): abseil flag names are identifiers (--data_dir), users
// type --data-dir. NormaliseFlagNames rewrites hyphens to underscores in the
// flag names (never in values) before absl::ParseCommandLine.
#ifndef DUALSWARM_UTIL_HYPHEN_FLAGS_H_
#define DUALSWARM_UTIL_HYPHEN_FLAGS_H_

#include <string>
#include <vector>

namespace dualswarm::util {

// Returns argv with "--a-b[=v]" rewritten to "--a_b[=v]"; `storage` owns the
// strings the returned pointers point into.
inline std::vector<char*> NormaliseFlagNames(int argc, char** argv, std::vector<std::string>* storage) {
  storage->clear();
  storage->reserve(static_cast<size_t>(argc));
  bool after_double_dash = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") after_double_dash = true;
    if (i > 0 && !after_double_dash && a.size() > 2 && a.compare(0, 2, "--") == 0) {
      size_t end = a.find('=');
      if (end == std::string::npos) end = a.size();
      for (size_t k = 2; k < end; ++k)
        if (a[k] == '-') a[k] = '_';
    }
    storage->push_back(a);
  }
  std::vector<char*> out;
  for (auto& s : *storage) out.push_back(s.data());
  return out;
}

}  // namespace dualswarm::util

#endif  // DUALSWARM_UTIL_HYPHEN_FLAGS_H_
