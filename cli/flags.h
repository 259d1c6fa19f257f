// Tiny flag parser shared by the CLI subcommands: "--name value",
// "--name=value" and boolean "--flag"; unknown flags are errors.
#ifndef DUALSWARM_CLI_FLAGS_H_
#define DUALSWARM_CLI_FLAGS_H_

#include <map>
#include <string>
#include <vector>

namespace dualswarm::cli {

using FlagMap = std::map<std::string, std::string>;

bool ParseFlags(const std::vector<std::string>& args, const std::vector<std::string>& with_value,
                const std::vector<std::string>& bool_flags, FlagMap* out, std::string* err);

// Prints "dualswarm: MSG" to stderr and returns the bad-input exit code.
int BadInput(const std::string& msg);

bool WantsHelp(const std::vector<std::string>& args);

}  // namespace dualswarm::cli

#endif  // DUALSWARM_CLI_FLAGS_H_
