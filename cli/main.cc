// Entry point of the `dualswarm` command: dispatches to subcommands.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

const char kUsage[] =
    "usage: dualswarm COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  check   check a recorded trace against a spec (offline validator)\n"
    "          dualswarm check --spec FILE --trace FILE [--network tcp|sync] [--json]\n"
    "                          [--max-frontier N] [--max-steps N]\n"
    "  test    test a live server against a spec (online tester)\n"
    "          dualswarm test --spec FILE (--launch CMD | --target HOST:PORT) [--seed N]\n"
    "                         [--steps N] [--time S] [--connections N] [--json] ...\n"
    "  replay  rerun a saved counterexample against a fresh SUT\n"
    "          dualswarm replay CX.json (--launch CMD | --target HOST:PORT) [--times N]\n"
    "  lint    load a spec and report every error with file:line:column\n"
    "          dualswarm lint --spec FILE\n"
    "\n"
    "exit codes: 0 accepted/ok, 1 rejected, 2 bad input or inconclusive\n"
    "run `dualswarm COMMAND --help` for details.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? dualswarm::cli::kExitBadInput : 0;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "check") return dualswarm::cli::CheckCommand(args);
  if (cmd == "test") return dualswarm::cli::TestCommand(args);
  if (cmd == "replay") return dualswarm::cli::ReplayCommand(args);
  if (cmd == "lint") return dualswarm::cli::SpecCheckCommand(args);
  std::fprintf(stderr, "dualswarm: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
  return dualswarm::cli::kExitBadInput;
}
