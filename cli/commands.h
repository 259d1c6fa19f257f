// Subcommands of the `dualswarm` command-line tool. Each takes the
// arguments after the subcommand name and returns the process exit code.
#ifndef DUALSWARM_CLI_COMMANDS_H_
#define DUALSWARM_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace dualswarm::cli {

// Exit codes shared by all subcommands.
inline constexpr int kExitOk = 0;        // accepted / success
inline constexpr int kExitRejected = 1;  // the SUT or trace was rejected
inline constexpr int kExitBadInput = 2;  // bad flags, spec, trace, or an inconclusive check

int CheckCommand(const std::vector<std::string>& args);
int TestCommand(const std::vector<std::string>& args);
int ReplayCommand(const std::vector<std::string>& args);
int SpecCheckCommand(const std::vector<std::string>& args);

}  // namespace dualswarm::cli

#endif  // DUALSWARM_CLI_COMMANDS_H_
