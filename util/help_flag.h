// --help for the abseil-flags binaries (dualswarm-coordinator,
// dualswarm-worker). Debian's abseil (20220623) prints --help to stderr and
// exits 1, so `dualswarm-worker --help | less` shows nothing and a script
// sees a failure. AnswerHelp answers -h, --help and --helpfull itself
// before absl::ParseCommandLine: the usage text and the binary's own flags
// on stdout, for an exit status of 0.
#ifndef DUALSWARM_UTIL_HELP_FLAG_H_
#define DUALSWARM_UTIL_HELP_FLAG_H_

#include <iostream>
#include <string>

#include "absl/flags/internal/program_name.h"
#include "absl/flags/internal/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace dualswarm::util {

// True when argv (before any "--") asks for help; then the usage and the
// flags defined in files whose path contains `flags_file` (--helpfull:
// every flag, abseil's own such as --tryfromenv too) have been printed to
// stdout.
inline bool AnswerHelp(int argc, char** argv, absl::string_view usage, absl::string_view flags_file) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") return false;
    if (a == "-h" || a == "--help" || a == "-help" || a == "--helpfull") {
      absl::flags_internal::SetProgramInvocationName(argv[0]);  // else it says "UNKNOWN"
      // FlagsHelp starts with "NAME: ": drop the usage text's own.
      const std::string name = absl::flags_internal::ShortProgramInvocationName();
      if (absl::StartsWith(usage, name + ": ")) usage.remove_prefix(name.size() + 2);
      absl::flags_internal::FlagsHelp(std::cout, a == "--helpfull" ? "" : flags_file,
                                      absl::flags_internal::HelpFormat::kHumanReadable, usage);
      std::cout.flush();
      return true;
    }
  }
  return false;
}

}  // namespace dualswarm::util

#endif  // DUALSWARM_UTIL_HELP_FLAG_H_
