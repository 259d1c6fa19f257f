// Entry point of the `dualswarm` command: dispatches to subcommands.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "util/huge_pages.h"
#include "workers/adapters/adapter_kinds.h"

namespace {

const char kUsage[] =
    "usage: dualswarm COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  check   check a recorded trace against a spec (offline validator)\n"
    "          dualswarm check --spec FILE --trace FILE [--network tcp|sync] [--json]\n"
    "                          [--max-frontier N] [--max-steps N] [--max-seconds S]\n"
    "  test    test a live server against a spec (online tester)\n"
    "          dualswarm test --spec FILE (--launch CMD | --target HOST:PORT) [--seed N]\n"
    "                         [--steps N] [--time S] [--connections N] [--json] ...\n"
    "  replay  rerun a saved counterexample against a fresh SUT\n"
    "          dualswarm replay CX.json (--launch CMD | --target HOST:PORT) [--times N]\n"
    "  lint    load a spec and report every error with file:line:column\n"
    "          dualswarm lint --spec FILE\n"
    "  explore model-check a spec composed with its gen block: assert failures and\n"
    "          deadlocks, each with the shortest request sequence found\n"
    "          dualswarm explore --spec FILE [--depth N] [--order first|last|random] [--json]\n"
    "\n"
    "commands that talk to a coordinator (--coordinator HOST:PORT or DUALSWARM_ADDR,\n"
    "--token T or DUALSWARM_TOKEN, --tls-ca FILE; --json for machine-readable output):\n"
    "  spec     spec push FILE [--name N] | spec list [--name N] | spec show HASH|--name N [--source]\n"
    "  target   target add NAME --adapter {ADAPTERS} (--launch CMD | --address HOST:PORT) ... (admin)\n"
    "           target list\n"
    "  run      run submit (--spec HASH | --spec-name N | --spec-file F) --target NAME|ID --jobs N\n"
    "                      [--watch] ... | run list [--state S] | run show|watch|cancel ID\n"
    "  finding  finding list [--run ID] [--spec HASH] [--target ID] | finding show ID [--save FILE]\n"
    "  campaign campaign create NAME --cron \"0 3 * * *\" (--spec HASH | --spec-name N) --target NAME|ID\n"
    "                    --jobs N ... | campaign list | campaign show|pause|resume|delete ID|NAME\n"
    "\n"
    "exit codes: 0 accepted/ok, 1 rejected (or the watched run failed), 2 bad input or\n"
    "inconclusive (or a request the coordinator refused), 3 the watched run was cancelled\n"
    "or ended in error, 4 the coordinator is unreachable or refused the caller\n"
    "run `dualswarm COMMAND --help` for details.\n";

}  // namespace

int main(int argc, char** argv) {
  dualswarm::UseHugePagesForTheHeap();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(dualswarm::workers::WithAdapterKinds(kUsage).c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? dualswarm::cli::kExitBadInput : 0;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "check") return dualswarm::cli::CheckCommand(args);
  if (cmd == "test") return dualswarm::cli::TestCommand(args);
  if (cmd == "replay") return dualswarm::cli::ReplayCommand(args);
  if (cmd == "lint") return dualswarm::cli::SpecCheckCommand(args);
  if (cmd == "explore") return dualswarm::cli::ExploreCommand(args);
  if (cmd == "spec") return dualswarm::cli::SpecCommand(args);
  if (cmd == "target") return dualswarm::cli::TargetCommand(args);
  if (cmd == "run") return dualswarm::cli::RunCommand(args);
  if (cmd == "finding") return dualswarm::cli::FindingCommand(args);
  if (cmd == "campaign") return dualswarm::cli::CampaignCommand(args);
  std::fprintf(stderr, "dualswarm: unknown command '%s'\n\n%s", cmd.c_str(),
               dualswarm::workers::WithAdapterKinds(kUsage).c_str());
  return dualswarm::cli::kExitBadInput;
}
