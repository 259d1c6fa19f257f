// `dualswarm campaign create|list|show|pause|resume|delete`: runs fired on a
// cron schedule by the coordinator (CampaignService), and `show`'s history
// of fired runs with the finding groups that are new or gone compared with
// the campaign's previous run (the regression view).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "cli/remote/client.h"
#include "cli/remote/resources.h"
#include "dualswarm/v1/campaign.grpc.pb.h"

namespace dualswarm::cli {
namespace {

using remote::Client;
using remote::ParsedArgs;

const char kCampaignHelp[] =
    "usage: dualswarm campaign create NAME --cron \"M H DOM MON DOW\" (--spec HASH | --spec-name NAME)\n"
    "                                 (--target NAME|ID | --explore-depth N) --jobs N [run options]\n"
    "                                 [--paused] [--json]\n"
    "       dualswarm campaign list [--json]\n"
    "       dualswarm campaign show ID|NAME [--runs N] [--json]\n"
    "       dualswarm campaign pause|resume|delete ID|NAME [--json]\n"
    "\n"
    "A campaign submits a run on a cron schedule (UTC), e.g. a nightly swarm against a\n"
    "staging target. With several coordinator replicas each fire time still submits one\n"
    "run; fire times missed while no coordinator ran are made up with one run.\n"
    "\n"
    "  create NAME             create a campaign (NAME: [A-Za-z0-9_.-]{1,64})\n"
    "    --cron EXPR           five fields, UTC: minute hour day-of-month month day-of-week;\n"
    "                          each *, N, A-B, */S, A-B/S or a comma list of them; day-of-week\n"
    "                          0-7 (0 and 7 are Sunday); when both day fields are restricted\n"
    "                          a day matching either fires. \"0 3 * * *\": 03:00 UTC daily\n"
    "    --spec HASH           test this spec version every time\n"
    "    --spec-name NAME      or: the newest version of spec NAME at each firing (\"latest\")\n"
    "    --target NAME|ID      the target (an all-digit value is an id)\n"
    "    --jobs N              swarm size of each run (1..100000)\n"
    "    --seed N              the same base seed for every run (default: a new random seed\n"
    "                          per run)\n"
    "    --steps N, --time-budget-ms N, --connections N, --max-in-flight N,\n"
    "    --response-timeout-ms N, --network tcp|sync, --gen NAME, --stop-at-first-finding,\n"
    "    --coverage-guided, --guide-candidates N,\n"
    "    --explore-depth N, --explore-max-states N (then no --target: explore runs)\n"
    "                          per-run options, as for `dualswarm run submit`\n"
    "    --paused              create it paused (it fires once resumed)\n"
    "  list                    every campaign: schedule, state, next fire time, last run\n"
    "  show ID|NAME            the campaign, its next fire time, and its history: the runs it\n"
    "                          fired, newest first, each with its finding groups, those that\n"
    "                          are new since the campaign's previous run (+ID) and those of\n"
    "                          the previous run that are gone (-ID)\n"
    "    --runs N              history length (default 10)\n"
    "  pause ID|NAME           stop firing (runs already submitted go on)\n"
    "  resume ID|NAME          fire again from the next fire time after now (times missed\n"
    "                          while paused are not made up)\n"
    "  delete ID|NAME          delete the campaign; the runs it fired stay\n"
    "  --json                  print the protobuf JSON mapping (show: {\"campaign\": ...,\n"
    "                          \"history\": ListCampaignRunsResponse})\n"
    "\n"
    "Roles: submitter or admin tokens.\n"
    "\n";

int Usage(const std::string& err) {
  return BadInput(absl::StrCat(err, "\n\n", kCampaignHelp, remote::kConnectionHelp));
}

int Connect(const ParsedArgs& a, std::unique_ptr<Client>* out) {
  auto client = Client::Connect(a.flags);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  *out = std::move(*client);
  return kExitOk;
}

// ID|NAME -> the request's id or name.
template <typename Req>
void SetIdOrName(const std::string& arg, Req* req) {
  int64_t id = 0;
  if (remote::ParseId(arg, &id)) {
    req->set_id(id);
  } else {
    req->set_name(arg);
  }
}

std::string SpecText(const v1::Campaign& c) {
  if (!c.spec_name().empty()) return absl::StrCat("latest ", c.spec_name());
  return c.template_().spec_hash().substr(0, 12);
}

std::string State(const v1::Campaign& c) { return c.paused() ? "paused" : "active"; }

std::string Ids(const google::protobuf::RepeatedField<int64_t>& ids, const char* prefix) {
  std::vector<std::string> out;
  for (int64_t id : ids) out.push_back(absl::StrCat(prefix, id));
  return out.empty() ? "-" : absl::StrJoin(out, ",");
}

int Create(const ParsedArgs& a) {
  const FlagMap& f = a.flags;
  if (a.positional.size() != 1) return Usage("campaign create needs one NAME");
  if (!f.count("cron")) return Usage("campaign create needs --cron \"M H DOM MON DOW\"");
  if (f.count("spec") + f.count("spec-name") != 1)
    return Usage("campaign create needs exactly one of --spec HASH or --spec-name NAME");
  const bool explore = f.count("explore-depth") > 0;
  if (!f.count("target") && !explore) return Usage("campaign create needs --target NAME|ID (or --explore-depth N)");
  if (f.count("target") && explore)
    return Usage("a campaign of explore runs (--explore-depth) tests no target: drop --target");
  if (!f.count("jobs")) return Usage("campaign create needs --jobs N");
  v1::CreateCampaignRequest req;
  v1::Campaign* c = req.mutable_campaign();
  c->set_name(a.positional[0]);
  c->set_cron(f.at("cron"));
  c->set_paused(f.count("paused") > 0);
  v1::RunTemplate* t = c->mutable_template_();
  std::string err;
  if (!remote::RunTemplateFromFlags(f, t, &err)) return BadInput(err);
  if (f.count("spec")) t->set_spec_hash(f.at("spec"));
  if (f.count("spec-name")) c->set_spec_name(f.at("spec-name"));

  std::unique_ptr<Client> client;
  if (int code = Connect(a, &client); code != kExitOk) return code;
  int code = 0;
  int64_t target_id = 0;  // explore runs': the coordinator's built-in one
  if (!explore && !remote::ResolveTarget(*client, f.at("target"), &target_id, &code)) return code;
  t->set_target_id(target_id);
  auto stub = v1::CampaignService::NewStub(client->channel());
  v1::Campaign made;
  if (!remote::CallOk(
          *client, [&](grpc::ClientContext* ctx) { return stub->Create(ctx, req, &made); }, &code))
    return code;
  if (f.count("json")) {
    std::printf("%s\n", remote::ToJson(made).c_str());
  } else {
    std::printf("campaign %lld \"%s\" created (%s): \"%s\" UTC, %d jobs of spec %s against target %lld\n",
                static_cast<long long>(made.id()), made.name().c_str(), State(made).c_str(), made.cron().c_str(),
                made.template_().jobs(), SpecText(made).c_str(), static_cast<long long>(made.template_().target_id()));
    std::printf("next fire: %s\n", made.paused() ? "- (paused)" : remote::FormatTime(made.next_fire_at()).c_str());
  }
  return kExitOk;
}

int List(const ParsedArgs& a) {
  if (!a.positional.empty()) return Usage(absl::StrCat("unexpected argument '", a.positional[0], "'"));
  std::unique_ptr<Client> client;
  if (int code = Connect(a, &client); code != kExitOk) return code;
  auto stub = v1::CampaignService::NewStub(client->channel());
  v1::ListCampaignsRequest req;
  req.set_page_size(500);
  v1::ListCampaignsResponse all;
  int code = 0;
  for (;;) {
    v1::ListCampaignsResponse page;
    if (!remote::CallOk(
            *client, [&](grpc::ClientContext* ctx) { return stub->List(ctx, req, &page); }, &code))
      return code;
    for (auto& c : *page.mutable_campaigns()) *all.add_campaigns() = std::move(c);
    if (page.next_page_token().empty()) break;
    req.set_page_token(page.next_page_token());
  }
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(all).c_str());
    return kExitOk;
  }
  if (all.campaigns().empty()) {
    std::printf("no campaigns\n");
    return kExitOk;
  }
  remote::Table t({"ID", "NAME", "STATE", "CRON (UTC)", "SPEC", "TARGET", "JOBS", "NEXT FIRE", "LAST RUN"});
  for (const auto& c : all.campaigns())
    t.Add({absl::StrCat(c.id()), c.name(), State(c), c.cron(), SpecText(c), absl::StrCat(c.template_().target_id()),
           absl::StrCat(c.template_().jobs()), c.paused() ? "-" : remote::FormatTime(c.next_fire_at()),
           c.last_run_id() ? absl::StrCat(c.last_run_id()) : "-"});
  std::fputs(t.Render().c_str(), stdout);
  return kExitOk;
}

void PrintCampaign(const v1::Campaign& c) {
  const v1::RunTemplate& t = c.template_();
  const v1::JobBudget& b = t.budget();
  std::printf("campaign %lld \"%s\": %s\n", static_cast<long long>(c.id()), c.name().c_str(), State(c).c_str());
  std::printf("  schedule      %s (UTC)\n", c.cron().c_str());
  std::printf("  next fire     %s\n", c.paused() ? "- (paused)" : remote::FormatTime(c.next_fire_at()).c_str());
  std::printf("  last fired    %s%s\n", remote::FormatTime(c.last_fired_at()).c_str(),
              c.last_run_id() ? absl::StrCat(" (run ", c.last_run_id(), ")").c_str() : "");
  if (!c.last_error().empty()) std::printf("  last error    %s\n", c.last_error().c_str());
  if (!c.spec_name().empty()) {
    std::printf("  spec          newest version of \"%s\" at each firing\n", c.spec_name().c_str());
  } else {
    std::printf("  spec          %s\n", t.spec_hash().c_str());
  }
  std::printf("  target        %lld\n", static_cast<long long>(t.target_id()));
  std::printf("  jobs          %d per run, seed %s%s\n", t.jobs(),
              t.seed() ? absl::StrCat(t.seed()).c_str() : "random per run",
              t.stop_at_first_finding() ? ", stops at the first finding" : "");
  std::printf(
      "  per job       %llu steps, %d connections, %d in flight, response timeout %lld ms%s, network %s, gen %s\n",
      static_cast<unsigned long long>(b.steps()), b.connections(), b.max_in_flight(),
      static_cast<long long>(b.response_timeout_ms()),
      b.time_budget_ms() > 0 ? absl::StrCat(", time budget ", b.time_budget_ms(), " ms").c_str() : "",
      b.network().c_str(), t.gen().c_str());
  std::printf("  created       %s\n", remote::FormatTime(c.created_at()).c_str());
}

int Show(const ParsedArgs& a) {
  if (a.positional.size() != 1) return Usage("campaign show needs one ID or NAME");
  int runs = 10;
  std::string err;
  if (!NumFlag(a.flags, "runs", 1, 500, &runs, &err)) return BadInput(err);
  std::unique_ptr<Client> client;
  if (int code = Connect(a, &client); code != kExitOk) return code;
  auto stub = v1::CampaignService::NewStub(client->channel());
  int code = 0;
  v1::CampaignIdRequest get;
  SetIdOrName(a.positional[0], &get);
  v1::Campaign c;
  if (!remote::CallOk(
          *client, [&](grpc::ClientContext* ctx) { return stub->Get(ctx, get, &c); }, &code))
    return code;
  v1::ListCampaignRunsRequest lr;
  lr.set_id(c.id());
  lr.set_page_size(runs);
  v1::ListCampaignRunsResponse history;
  if (!remote::CallOk(
          *client, [&](grpc::ClientContext* ctx) { return stub->ListRuns(ctx, lr, &history); }, &code))
    return code;
  if (a.flags.count("json")) {
    std::printf("{\"campaign\":%s,\"history\":%s}\n", remote::ToJson(c).c_str(), remote::ToJson(history).c_str());
    return kExitOk;
  }
  PrintCampaign(c);
  if (history.runs().empty()) {
    std::printf("\nno runs fired yet\n");
    return kExitOk;
  }
  std::printf("\nhistory (newest first; NEW/GONE: finding groups compared with the previous run):\n");
  remote::Table t({"RUN", "STATE", "CREATED", "FINDINGS", "NEW", "GONE"});
  for (const auto& r : history.runs())
    t.Add({absl::StrCat(r.run().id()), remote::EnumText(r.run().state()), remote::FormatTime(r.run().created_at()),
           Ids(r.finding_ids(), ""), Ids(r.new_finding_ids(), "+"), Ids(r.gone_finding_ids(), "-")});
  std::fputs(t.Render().c_str(), stdout);
  std::printf("see a finding: dualswarm finding show ID\n");
  return kExitOk;
}

int Change(const ParsedArgs& a, const std::string& sub) {
  if (a.positional.size() != 1) return Usage(absl::StrCat("campaign ", sub, " needs one ID or NAME"));
  std::unique_ptr<Client> client;
  if (int code = Connect(a, &client); code != kExitOk) return code;
  auto stub = v1::CampaignService::NewStub(client->channel());
  int code = 0;
  v1::CampaignIdRequest req;
  SetIdOrName(a.positional[0], &req);
  if (sub == "delete") {
    v1::DeleteCampaignResponse resp;
    if (!remote::CallOk(
            *client, [&](grpc::ClientContext* ctx) { return stub->Delete(ctx, req, &resp); }, &code))
      return code;
    if (a.flags.count("json")) {
      std::printf("%s\n", remote::ToJson(resp).c_str());
    } else {
      std::printf("campaign %s deleted (the runs it fired stay)\n", a.positional[0].c_str());
    }
    return kExitOk;
  }
  v1::Campaign c;
  bool ok = remote::CallOk(
      *client,
      [&](grpc::ClientContext* ctx) { return sub == "pause" ? stub->Pause(ctx, req, &c) : stub->Resume(ctx, req, &c); },
      &code);
  if (!ok) return code;
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(c).c_str());
  } else {
    std::printf("campaign %lld \"%s\": %s, next fire %s\n", static_cast<long long>(c.id()), c.name().c_str(),
                State(c).c_str(), c.paused() ? "- (paused)" : remote::FormatTime(c.next_fire_at()).c_str());
  }
  return kExitOk;
}

}  // namespace

int CampaignCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kCampaignHelp, args.empty() ? stderr : stdout);
    std::fputs(remote::kConnectionHelp, args.empty() ? stderr : stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  std::string sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (WantsHelp(rest)) {
    std::fputs(kCampaignHelp, stdout);
    std::fputs(remote::kConnectionHelp, stdout);
    return kExitOk;
  }
  ParsedArgs a;
  std::string err;
  if (sub == "create") {
    if (!remote::ParseRemoteArgs(rest,
                                 {"cron", "spec", "spec-name", "target", "jobs", "seed", "steps", "time-budget-ms",
                                  "connections", "max-in-flight", "response-timeout-ms", "network", "gen",
                                  "guide-candidates", "explore-depth", "explore-max-states"},
                                 {"stop-at-first-finding", "paused", "json", "coverage-guided"}, &a, &err))
      return Usage(err);
    return Create(a);
  }
  if (sub == "list") {
    if (!remote::ParseRemoteArgs(rest, {}, {"json"}, &a, &err)) return Usage(err);
    return List(a);
  }
  if (sub == "show") {
    if (!remote::ParseRemoteArgs(rest, {"runs"}, {"json"}, &a, &err)) return Usage(err);
    return Show(a);
  }
  if (sub == "pause" || sub == "resume" || sub == "delete") {
    if (!remote::ParseRemoteArgs(rest, {}, {"json"}, &a, &err)) return Usage(err);
    return Change(a, sub);
  }
  return Usage(absl::StrCat("unknown campaign command '", sub, "'"));
}

}  // namespace dualswarm::cli
