// `dualswarm target add|list`: system-under-test profiles on the
// coordinator (TargetService). Adding one is for admins only: a target may
// hold a command workers execute. A grpc target carries its services'
// descriptor set (--descriptor-set FILE); listings show its size. A launch
// command may start a cluster (--nodes N, --connect round-robin|K).
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/remote/client.h"
#include "cli/remote/resources.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "workers/adapters/adapter_kinds.h"
#include "workers/adapters/origin_listener.h"
#include "workers/sut/cluster.h"

namespace dualswarm::cli {
namespace remote {

bool ResolveTarget(const Client& client, const std::string& name_or_id, int64_t* id, int* exit_code) {
  if (ParseId(name_or_id, id)) return true;
  auto stub = v1::TargetService::NewStub(client.channel());
  v1::GetTargetRequest req;
  req.set_name(name_or_id);
  v1::Target t;
  if (!CallOk(
          client, [&](grpc::ClientContext* ctx) { return stub->Get(ctx, req, &t); }, exit_code))
    return false;
  *id = t.id();
  return true;
}

}  // namespace remote

namespace {

using remote::Client;
using remote::ParsedArgs;

const char kTargetHelp[] =
    "usage: dualswarm target add NAME --adapter {ADAPTERS} (--launch CMD | --address HOST:PORT)\n"
    "                            [--ready tcp|http:/PATH] [--ready-timeout-ms N]\n"
    "                            [--reset restart-per-job|none] [--label K=V ...]\n"
    "                            [--descriptor-set FILE] [--nodes N] [--connect round-robin|K]\n"
    "                            [--nemesis pause,kill,partition [--fault-interval MS]\n"
    "                            [--fault-duration MS]] [--origins N] [--run-as USER]\n"
    "                            [--reset-command CMD] [--json]\n"
    "       dualswarm target list [--json]\n"
    "\n"
    "Targets are the systems under test runs are submitted against.\n"
    "\n"
    "  add NAME            register a target (admin tokens only; NAME: [A-Za-z0-9_.-]{1,64})\n"
    "    --adapter A       wire protocol: one of {ADAPTERS} (docs/adapters.md)\n"
    "    --launch CMD      workers start the SUT with CMD (under /bin/sh, in a fresh\n"
    "                      directory); {port} becomes a free port, {dir} the directory\n"
    "    --address H:P     or: test a server that is already running there\n"
    "    --ready P         readiness probe of a launched SUT: tcp (a connect succeeds, the\n"
    "                      default) or http:/PATH (GET PATH answers 2xx, 3xx or 4xx)\n"
    "    --ready-timeout-ms N  give up on a launched SUT after N ms (default 10000)\n"
    "    --reset R         between jobs: restart-per-job (default with --launch) or none\n"
    "                      (default with --address)\n"
    "    --label K=V       workers must carry this label to run the target's jobs;\n"
    "                      repeatable, or comma-separated\n"
    "    --descriptor-set F  grpc targets (required for them): the services' protobuf\n"
    "                      descriptor set, from protoc --descriptor_set_out=F\n"
    "                      --include_imports; at most 1 MiB, sent to workers with every job\n"
    "    --nodes N         with --launch: start N nodes (1-16, default 1) from CMD, each with\n"
    "                      {node}, {nodes}, {peer_port}, {peers}, {port_K}, ... (docs/clusters.md)\n"
    "    --connect WHERE   round-robin (connection c to node c mod N; the default) or a\n"
    "                      node's number K (every connection to node K)\n"
    "    --nemesis FAULTS  with --launch: inject faults into the nodes while each job runs,\n"
    "                      on a schedule from the job's seed: pause, kill, partition\n"
    "                      and slow (--nodes 2 or more), split and bridge (--nodes 3\n"
    "                      or more), comma-separated (docs/clusters.md)\n"
    "    --fault-interval MS  mean time from one fault's end to the next (default 1000)\n"
    "    --fault-duration MS  how long a fault lasts (default 300; below the runs'\n"
    "                      response timeout)\n"
    "    --origins N       with --launch: the SUT is an intermediary (a proxy, a cache) and\n"
    "                      the tester also plays N origin servers (1-16) on loopback ports\n"
    "                      that CMD names {origin_port} (the first) and {origin_port_K};\n"
    "                      for specs with an origin role (docs/spec-language.md)\n"
    "    --run-as USER     fs targets: workers run the program as USER, who owns the\n"
    "                      replicas, so that mode bits bind it (root ignores them); a\n"
    "                      worker running neither as root nor as USER, or without\n"
    "                      USER, fails the job\n"
    "    --reset-command CMD  with --launch: shrinking reruns reuse running SUTs and run\n"
    "                      CMD (with CMD's placeholders: {port}, {dir}, ...) to bring one\n"
    "                      back to a fresh state instead of launching one per rerun; it\n"
    "                      must exit 0 within the readiness timeout (a failure: fresh\n"
    "                      SUTs from then on); verification replays launch fresh SUTs\n"
    "  list                every target, by name\n"
    "  --json              print the protobuf JSON mapping of the response\n"
    "\n";

std::string TargetHelp() { return workers::WithAdapterKinds(kTargetHelp); }

int Usage(const std::string& err) { return BadInput(absl::StrCat(err, "\n\n", TargetHelp(), remote::kConnectionHelp)); }

// The reset policy, and the command that resets SUTs between shrinking
// reruns when there is one.
std::string ResetText(const v1::Target& t) {
  if (t.reset_command().empty()) return remote::EnumText(t.reset_policy());
  return absl::StrCat(remote::EnumText(t.reset_policy()), " (reruns reset by `", t.reset_command(), "`)");
}

// The adapter, with the size of a grpc target's descriptor set or the user
// an fs target's program runs as.
std::string AdapterText(const v1::Target& t) {
  if (!t.run_as().empty()) return absl::StrCat(t.adapter(), " (as ", t.run_as(), ")");
  if (t.descriptor_set_size() == 0) return t.adapter();
  return absl::StrCat(t.adapter(), " (descriptor set ", t.descriptor_set_size(), " bytes)");
}

// ", 3 nodes, round-robin" for a cluster; "" for one node.
std::string ClusterText(const v1::Target& t) {
  if (t.nodes() <= 1) return "";
  return absl::StrCat(
      ", ", t.nodes(), " nodes, ",
      t.has_connect_node() ? absl::StrCat("all connections to node ", t.connect_node()) : "round-robin");
}

// ", nemesis pause,kill (a fault every ~1000 ms for 300 ms)"; "" without.
std::string NemesisText(const v1::Target& t) {
  if (t.nemesis().empty()) return "";
  return absl::StrCat(", nemesis ", t.nemesis(), " (a fault every ~",
                      t.fault_interval_ms() > 0 ? t.fault_interval_ms() : 1000, " ms for ",
                      t.fault_duration_ms() > 0 ? t.fault_duration_ms() : 300, " ms)");
}

// ", 1 origin endpoint" for an intermediary; "" without.
std::string OriginsText(const v1::Target& t) {
  if (t.origins() <= 0) return "";
  return absl::StrCat(", ", t.origins(), t.origins() == 1 ? " origin endpoint" : " origin endpoints");
}

// --nodes, --connect, --origins and the nemesis flags into `t`; the coordinator
// checks the ranges against each other and that the target launches its
// SUT.
std::optional<int> ClusterFromFlags(const FlagMap& f, v1::Target* t) {
  if (auto it = f.find("nemesis"); it != f.end()) t->set_nemesis(it->second);
  for (const auto& [flag, set] :
       {std::pair<const char*, void (v1::Target::*)(int64_t)>{"fault-interval", &v1::Target::set_fault_interval_ms},
        {"fault-duration", &v1::Target::set_fault_duration_ms}}) {
    auto it = f.find(flag);
    if (it == f.end()) continue;
    int64_t ms = 0;
    if (!absl::SimpleAtoi(it->second, &ms) || ms < 1 || ms > 3'600'000)
      return BadInput(absl::StrCat("--", flag, " must be between 1 and 3600000 ms"));
    (t->*set)(ms);
  }
  int n = 0;
  if (auto it = f.find("origins"); it != f.end()) {
    if (!absl::SimpleAtoi(it->second, &n) || n < 1 || n > workers::kMaxOriginEndpoints)
      return BadInput(absl::StrCat("--origins must be between 1 and ", workers::kMaxOriginEndpoints));
    t->set_origins(n);
  }
  if (auto it = f.find("nodes"); it != f.end()) {
    if (!absl::SimpleAtoi(it->second, &n) || n < 1 || n > workers::kMaxClusterNodes)
      return BadInput(absl::StrCat("--nodes must be between 1 and ", workers::kMaxClusterNodes));
    t->set_nodes(n);
  }
  auto it = f.find("connect");
  if (it == f.end() || it->second == "round-robin") return std::nullopt;
  if (!absl::SimpleAtoi(it->second, &n) || n < 0)
    return BadInput(absl::StrCat("--connect must be round-robin or a node's number, not '", it->second, "'"));
  t->set_connect_node(n);
  return std::nullopt;
}

int Add(const ParsedArgs& a) {
  if (a.positional.size() != 1) return Usage("target add needs exactly one NAME");
  const FlagMap& f = a.flags;
  if (!f.count("adapter")) return Usage(workers::WithAdapterKinds("target add needs --adapter {ADAPTERS}"));
  if (f.count("launch") == f.count("address"))
    return Usage("target add needs exactly one of --launch CMD or --address HOST:PORT");
  v1::CreateTargetRequest req;
  v1::Target* t = req.mutable_target();
  t->set_name(a.positional[0]);
  t->set_adapter(f.at("adapter"));
  if (f.count("launch")) t->set_launch(f.at("launch"));
  if (f.count("address")) t->set_address(f.at("address"));
  if (f.count("ready")) t->mutable_readiness()->set_probe(f.at("ready"));
  if (f.count("ready-timeout-ms")) {
    int ms = 0;
    if (!absl::SimpleAtoi(f.at("ready-timeout-ms"), &ms) || ms < 1 || ms > 600000)
      return BadInput("--ready-timeout-ms must be between 1 and 600000");
    t->mutable_readiness()->set_timeout_ms(ms);
  }
  if (f.count("reset")) {
    v1::ResetPolicy p;
    if (!remote::ParseEnumText(f.at("reset"), &p))
      return BadInput(absl::StrCat("--reset must be one of ", remote::EnumChoices<v1::ResetPolicy>()));
    t->set_reset_policy(p);
  }
  if (f.count("reset-command")) t->set_reset_command(f.at("reset-command"));
  // The same rules as `dualswarm test --descriptor-set` and `--run-as` (the
  // coordinator checks again, and holds sets to 1 MiB).
  FlagMap adapter_flags = f;
  workers::JobOptions o;
  o.adapter = t->adapter();
  if (std::optional<int> bad = AdapterConfigFromFlags(adapter_flags, &o)) return *bad;
  t->set_descriptor_set(std::move(o.adapter_config.descriptor_set));
  t->set_run_as(o.adapter_config.fs_user);
  if (std::optional<int> bad = ClusterFromFlags(f, t)) return *bad;
  if (auto it = a.all.find("label"); it != a.all.end())
    for (const auto& v : it->second)
      for (absl::string_view l : absl::StrSplit(v, ',', absl::SkipWhitespace())) t->add_labels(std::string(l));
  auto client = Client::Connect(f);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  auto stub = v1::TargetService::NewStub((*client)->channel());
  v1::Target created;
  int code = 0;
  if (!remote::CallOk(
          **client, [&](grpc::ClientContext* ctx) { return stub->Create(ctx, req, &created); }, &code))
    return code;
  if (f.count("json")) {
    std::printf("%s\n", remote::ToJson(created).c_str());
  } else {
    std::printf(
        "target %lld '%s' added: %s %s, ready %s (%d ms), reset %s%s\n", static_cast<long long>(created.id()),
        created.name().c_str(), AdapterText(created).c_str(),
        created.launch().empty() ? created.address().c_str()
                                 : absl::StrCat("launch `", created.launch(), "`", ClusterText(created),
                                                NemesisText(created), OriginsText(created))
                                       .c_str(),
        created.readiness().probe().c_str(), created.readiness().timeout_ms(), ResetText(created).c_str(),
        created.labels().empty() ? "" : absl::StrCat(", labels ", absl::StrJoin(created.labels(), ",")).c_str());
  }
  return kExitOk;
}

int List(const ParsedArgs& a) {
  if (!a.positional.empty()) return Usage(absl::StrCat("unexpected argument '", a.positional[0], "'"));
  auto client = Client::Connect(a.flags);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  auto stub = v1::TargetService::NewStub((*client)->channel());
  v1::ListTargetsRequest req;
  req.set_page_size(500);
  v1::ListTargetsResponse all;
  int code = 0;
  for (;;) {
    v1::ListTargetsResponse page;
    if (!remote::CallOk(
            **client, [&](grpc::ClientContext* ctx) { return stub->List(ctx, req, &page); }, &code))
      return code;
    for (auto& t : *page.mutable_targets()) *all.add_targets() = std::move(t);
    if (page.next_page_token().empty()) break;
    req.set_page_token(page.next_page_token());
  }
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(all).c_str());
    return kExitOk;
  }
  if (all.targets().empty()) {
    std::printf("no targets (an admin adds one with `dualswarm target add`)\n");
    return kExitOk;
  }
  remote::Table t({"ID", "NAME", "ADAPTER", "RESET", "LABELS", "SUT"});
  for (const auto& x : all.targets())
    t.Add({absl::StrCat(x.id()), x.name(), AdapterText(x), ResetText(x), absl::StrJoin(x.labels(), ","),
           x.launch().empty()
               ? x.address()
               : absl::StrCat("launch", ClusterText(x), NemesisText(x), OriginsText(x), ": ", x.launch())});
  std::fputs(t.Render().c_str(), stdout);
  return kExitOk;
}

}  // namespace

int TargetCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(TargetHelp().c_str(), args.empty() ? stderr : stdout);
    std::fputs(remote::kConnectionHelp, args.empty() ? stderr : stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  std::string sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (WantsHelp(rest)) {
    std::fputs(TargetHelp().c_str(), stdout);
    std::fputs(remote::kConnectionHelp, stdout);
    return kExitOk;
  }
  ParsedArgs a;
  std::string err;
  if (sub == "add") {
    if (!remote::ParseRemoteArgs(
            rest,
            {"adapter", "launch", "address", "ready", "ready-timeout-ms", "reset", "label", "descriptor-set", "nodes",
             "connect", "nemesis", "fault-interval", "fault-duration", "origins", "run-as", "reset-command"},
            {"json"}, &a, &err))
      return Usage(err);
    return Add(a);
  }
  if (sub == "list") {
    if (!remote::ParseRemoteArgs(rest, {}, {"json"}, &a, &err)) return Usage(err);
    return List(a);
  }
  return Usage(absl::StrCat("unknown target command '", sub, "'"));
}

}  // namespace dualswarm::cli
