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
// The remote commands add 3 (a watched run was cancelled or ended in error)
// and 4 (the coordinator is unreachable or refused the caller); see
// cli/remote/client.h.

int CheckCommand(const std::vector<std::string>& args);
int TestCommand(const std::vector<std::string>& args);
int ReplayCommand(const std::vector<std::string>& args);
int SpecCheckCommand(const std::vector<std::string>& args);
int ExploreCommand(const std::vector<std::string>& args);

// Commands that talk to a coordinator over gRPC (cli/remote/).
int SpecCommand(const std::vector<std::string>& args);      // spec push|list|show
int TargetCommand(const std::vector<std::string>& args);    // target add|list
int RunCommand(const std::vector<std::string>& args);       // run submit|list|show|watch|cancel
int FindingCommand(const std::vector<std::string>& args);   // finding list|show
int CampaignCommand(const std::vector<std::string>& args);  // campaign create|list|show|pause|resume|delete

}  // namespace dualswarm::cli

#endif  // DUALSWARM_CLI_COMMANDS_H_
