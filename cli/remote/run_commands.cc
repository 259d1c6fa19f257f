// `dualswarm run submit|list|show|watch|cancel`: runs on the coordinator
// (RunService). `run watch` follows RunService.Watch: a redrawn progress
// line on a terminal, one line per event otherwise, and an exit code from
// the run's final state.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/commands.h"
#include "cli/remote/client.h"
#include "cli/remote/resources.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"

namespace dualswarm::cli {
namespace {

using remote::Client;
using remote::ParsedArgs;

const char kRunHelp[] =
    "usage: dualswarm run submit (--spec HASH | --spec-name NAME | --spec-file FILE)\n"
    "                            (--target NAME|ID | --explore-depth N) --jobs N [options]\n"
    "                            [--watch] [--json]\n"
    "       dualswarm run list [--state S] [--spec HASH] [--target NAME|ID] [--limit N] [--json]\n"
    "       dualswarm run show ID [--json]\n"
    "       dualswarm run watch ID [--json]\n"
    "       dualswarm run cancel ID [--json]\n"
    "       dualswarm run coverage ID [--all] [--json]\n"
    "\n"
    "A run tests one spec version against one target with a swarm of jobs (distinct\n"
    "seeds, branch orders and feature masks) that workers lease from the coordinator.\n"
    "\n"
    "  submit                  submit a run; prints its id\n"
    "    --spec HASH           the spec version to test\n"
    "    --spec-name NAME      or: the newest version of spec NAME\n"
    "    --spec-file FILE      or: push FILE first (like `dualswarm spec push`) and test it\n"
    "    --target NAME|ID      the target (an all-digit value is an id)\n"
    "    --jobs N              swarm size: number of jobs (1..100000)\n"
    "    --seed N              base seed; each job's seed derives from it (default: random)\n"
    "    --steps N             requests per job (default 1000)\n"
    "    --time-budget-ms N    wall-time limit per job (default: none)\n"
    "    --connections N       client connections per job (default 4)\n"
    "    --max-in-flight N     outstanding requests per job (default 4)\n"
    "    --response-timeout-ms N  a later response is a liveness finding (default 5000)\n"
    "    --network tcp|sync    network model (default tcp)\n"
    "    --gen NAME            the gen block to drive (default request)\n"
    "    --coverage-guided     each request the best of 8 drawn: the one predicted to reach\n"
    "                          the most spec branches not reached yet (docs/coverage.md);\n"
    "                          --guide-candidates N (2-64) draws N\n"
    "    --stop-at-first-finding  cancel the remaining jobs once one job fails\n"
    "    --explore-depth N     model-check the spec instead (no --target): each job explores\n"
    "                          it with its gen to N requests (1..64) in its own order and\n"
    "                          stops at the first violation (docs/explore.md); a job's\n"
    "                          time is --time-budget-ms (default 60 s)\n"
    "    --explore-max-states N  distinct states each explore job keeps (default 200000)\n"
    "    --watch               then follow the run like `run watch` (and exit like it)\n"
    "  list                    runs, newest first\n"
    "    --state S             only runs in state S (queued|running|passed|failed|cancelled|error)\n"
    "    --spec HASH           only runs of this spec version\n"
    "    --target NAME|ID      only runs against this target\n"
    "    --limit N             at most N runs (default 20)\n"
    "  show ID                 one run: template, job counts, times\n"
    "  watch ID                follow a run until it ends: on a terminal a progress line\n"
    "                          (jobs done/total, queued/leased/passed/failed/error, elapsed\n"
    "                          time), otherwise one line per change. Exit 0 when the run\n"
    "                          passed, 1 when it failed (findings), 3 when it was cancelled\n"
    "                          or ended in error\n"
    "  cancel ID               stop leasing the run's jobs (running jobs are told at their\n"
    "                          next heartbeat); cancelling a finished run changes nothing\n"
    "  coverage ID             the spec branches the run's completed jobs covered, and the\n"
    "                          first 20 never taken (--all: every one) (docs/coverage.md)\n"
    "  --json                  print the protobuf JSON mapping (watch: one RunEvent per line)\n"
    "\n";

int Usage(const std::string& err) { return BadInput(absl::StrCat(err, "\n\n", kRunHelp, remote::kConnectionHelp)); }

int Connect(const ParsedArgs& a, std::unique_ptr<Client>* out) {
  auto client = Client::Connect(a.flags);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  *out = std::move(*client);
  return kExitOk;
}

int Done(const v1::JobCounts& c) { return c.passed() + c.failed() + c.error() + c.cancelled(); }

double Elapsed(const v1::Run& r) {
  if (!remote::IsSet(r.created_at())) return 0;
  double end = remote::IsSet(r.finished_at())
                   ? remote::Seconds(r.finished_at())
                   : std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return std::max(0.0, end - remote::Seconds(r.created_at()));
}

std::string FormatSeconds(double s) {
  if (s < 60) return absl::StrFormat("%.1fs", s);
  int64_t t = static_cast<int64_t>(s);
  if (t < 3600) return absl::StrFormat("%dm%02ds", t / 60, t % 60);
  return absl::StrFormat("%dh%02dm%02ds", t / 3600, (t / 60) % 60, t % 60);
}

std::string Counts(const v1::JobCounts& c) {
  return absl::StrCat("queued ", c.queued(), ", leased ", c.leased(), ", passed ", c.passed(), ", failed ", c.failed(),
                      ", error ", c.error(), ", cancelled ", c.cancelled());
}

// The one-line view of a run (plain: one line per event; bar: the redrawn
// terminal line).
std::string ProgressLine(const v1::Run& r, bool bar) {
  const v1::JobCounts& c = r.counts();
  int done = Done(c), total = c.total();
  std::string state = remote::EnumText(r.state());
  if (!bar)
    return absl::StrCat("run ", r.id(), " ", state, ": ", done, "/", total, " jobs done (", Counts(c), "), ",
                        FormatSeconds(Elapsed(r)));
  constexpr int kWidth = 24;
  int filled = total > 0 ? static_cast<int>(static_cast<int64_t>(done) * kWidth / total) : 0;
  return absl::StrCat("run ", r.id(), " [", std::string(filled, '#'), std::string(kWidth - filled, '.'), "] ", done,
                      "/", total, "  queued ", c.queued(), "  leased ", c.leased(), "  passed ", c.passed(),
                      "  failed ", c.failed(), "  error ", c.error(), "  ", FormatSeconds(Elapsed(r)), "  ", state);
}

int ExitForState(v1::RunState s) {
  switch (s) {
    case v1::RUN_STATE_PASSED:
      return kExitOk;
    case v1::RUN_STATE_FAILED:
      return kExitRejected;
    default:
      return remote::kExitRunNotPassed;
  }
}

std::string Summary(const v1::Run& r) {
  const v1::JobCounts& c = r.counts();
  std::string took = FormatSeconds(Elapsed(r));
  switch (r.state()) {
    case v1::RUN_STATE_PASSED:
      return absl::StrCat("run ", r.id(), " passed: ", c.total(), " jobs, no findings (", took, ")");
    case v1::RUN_STATE_FAILED:
      return absl::StrCat("run ", r.id(), " failed: ", c.failed(), " of ", c.total(), " jobs found a bug (", took,
                          "); see `dualswarm finding list --run ", r.id(), "`");
    case v1::RUN_STATE_CANCELLED:
      return absl::StrCat("run ", r.id(), " cancelled: ", Done(r.counts()) - c.cancelled(), " of ", c.total(),
                          " jobs had finished (", took, ")");
    default:
      return absl::StrCat("run ", r.id(), " ended in error: ", r.error().empty() ? Counts(c) : r.error(), " (", took,
                          ")");
  }
}

// Follows RunService.Watch until the run's final event.
int Watch(const Client& client, int64_t id, bool json) {
  auto stub = v1::RunService::NewStub(client.channel());
  v1::WatchRunRequest req;
  req.set_id(id);
  auto ctx = client.Streaming();
  std::unique_ptr<grpc::ClientReader<v1::RunEvent>> reader = stub->Watch(ctx.get(), req);
  bool tty = !json && isatty(STDOUT_FILENO);

  // On a terminal a ticker redraws the line every second, so the elapsed
  // time moves while nothing else changes.
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false, have = false;
  v1::Run last;
  auto draw = [&] {
    std::printf("\r\033[K%s", ProgressLine(last, true).c_str());
    std::fflush(stdout);
  };
  std::thread ticker;
  if (tty)
    ticker = std::thread([&] {
      std::unique_lock<std::mutex> lock(mu);
      while (!cv.wait_for(lock, std::chrono::seconds(1), [&] { return stop; }))
        if (have) draw();
    });
  auto end_ticker = [&] {
    if (!ticker.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_all();
    ticker.join();
  };

  v1::RunEvent ev;
  bool final = false;
  while (reader->Read(&ev)) {
    std::lock_guard<std::mutex> lock(mu);
    last = ev.run();
    have = true;
    if (json) {
      std::printf("%s\n", remote::ToJson(ev).c_str());
    } else if (tty) {
      draw();
    } else {
      std::printf("%s\n", ProgressLine(last, false).c_str());
    }
    std::fflush(stdout);
    if (ev.final()) {
      final = true;
      break;
    }
  }
  end_ticker();
  grpc::Status st = reader->Finish();
  if (tty && have) std::printf("\n");
  if (!final) {
    if (!st.ok()) return client.Fail(st);
    return client.Fail(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the watch ended before the run finished"));
  }
  if (!json) std::printf("%s\n", Summary(last).c_str());
  std::fflush(stdout);
  return ExitForState(last.state());
}

int Submit(const ParsedArgs& a) {
  const FlagMap& f = a.flags;
  if (!a.positional.empty()) return Usage(absl::StrCat("unexpected argument '", a.positional[0], "'"));
  if (f.count("spec") + f.count("spec-name") + f.count("spec-file") != 1)
    return Usage("run submit needs exactly one of --spec HASH, --spec-name NAME or --spec-file FILE");
  const bool explore = f.count("explore-depth") > 0;
  if (!f.count("target") && !explore) return Usage("run submit needs --target NAME|ID (or --explore-depth N)");
  if (f.count("target") && explore)
    return Usage("an explore run (--explore-depth) model-checks the spec and tests no target: drop --target");
  if (!f.count("jobs")) return Usage("run submit needs --jobs N");
  v1::SubmitRunRequest req;
  v1::RunTemplate* t = req.mutable_template_();
  std::string err;
  if (!remote::RunTemplateFromFlags(f, t, &err)) return BadInput(err);

  std::unique_ptr<Client> client;
  if (int c = Connect(a, &client); c != kExitOk) return c;
  int code = 0;
  bool json = f.count("json") > 0;
  std::string spec_name;
  if (f.count("spec")) {
    t->set_spec_hash(f.at("spec"));
  } else if (f.count("spec-name")) {
    auto stub = v1::SpecService::NewStub(client->channel());
    v1::GetSpecRequest g;
    g.set_name(f.at("spec-name"));
    v1::Spec s;
    if (!remote::CallOk(
            *client, [&](grpc::ClientContext* ctx) { return stub->Get(ctx, g, &s); }, &code))
      return code;
    t->set_spec_hash(s.hash());
    spec_name = s.name();
  } else {
    v1::CreateSpecResponse pushed;
    if (!remote::PushSpecFile(*client, f.at("spec-file"), "", &pushed, &code)) return code;
    t->set_spec_hash(pushed.spec().hash());
    spec_name = pushed.spec().name();
    if (!json)
      std::fprintf(stderr, "pushed %s: spec %s %s (%s)\n", f.at("spec-file").c_str(), spec_name.c_str(),
                   pushed.spec().hash().c_str(), pushed.created() ? "new version" : "already stored");
  }
  int64_t target_id = 0;  // an explore run's: the coordinator's built-in one
  if (!explore && !remote::ResolveTarget(*client, f.at("target"), &target_id, &code)) return code;
  t->set_target_id(target_id);

  auto stub = v1::RunService::NewStub(client->channel());
  v1::Run run;
  if (!remote::CallOk(
          *client, [&](grpc::ClientContext* ctx) { return stub->Submit(ctx, req, &run); }, &code))
    return code;
  if (json) {
    std::printf("%s\n", remote::ToJson(run).c_str());
  } else {
    std::printf(
        "run %lld submitted: %d jobs of spec %s%s%s against target %lld, seed %llu\n", static_cast<long long>(run.id()),
        run.template_().jobs(), spec_name.c_str(), spec_name.empty() ? "" : " ", run.template_().spec_hash().c_str(),
        static_cast<long long>(run.template_().target_id()), static_cast<unsigned long long>(run.template_().seed()));
    if (!f.count("watch")) std::printf("follow it: dualswarm run watch %lld\n", static_cast<long long>(run.id()));
  }
  std::fflush(stdout);
  if (f.count("watch")) return Watch(*client, run.id(), json);
  return kExitOk;
}

int List(const ParsedArgs& a) {
  const FlagMap& f = a.flags;
  if (!a.positional.empty()) return Usage(absl::StrCat("unexpected argument '", a.positional[0], "'"));
  v1::ListRunsRequest req;
  if (f.count("state")) {
    v1::RunState s;
    if (!remote::ParseEnumText(f.at("state"), &s))
      return BadInput(absl::StrCat("--state must be one of ", remote::EnumChoices<v1::RunState>()));
    req.set_state(s);
  }
  int limit = 20;
  std::string err;
  if (!NumFlag(f, "limit", 1, 100000, &limit, &err)) return BadInput(err);
  if (f.count("spec")) req.set_spec_hash(f.at("spec"));
  std::unique_ptr<Client> client;
  if (int c = Connect(a, &client); c != kExitOk) return c;
  int code = 0;
  if (f.count("target")) {
    int64_t id = 0;
    if (!remote::ResolveTarget(*client, f.at("target"), &id, &code)) return code;
    req.set_target_id(id);
  }
  auto stub = v1::RunService::NewStub(client->channel());
  v1::ListRunsResponse all;
  while (all.runs_size() < limit) {
    req.set_page_size(std::min(limit - all.runs_size(), 500));
    v1::ListRunsResponse page;
    if (!remote::CallOk(
            *client, [&](grpc::ClientContext* ctx) { return stub->List(ctx, req, &page); }, &code))
      return code;
    for (auto& r : *page.mutable_runs()) *all.add_runs() = std::move(r);
    if (page.next_page_token().empty()) break;
    req.set_page_token(page.next_page_token());
  }
  if (f.count("json")) {
    std::printf("%s\n", remote::ToJson(all).c_str());
    return kExitOk;
  }
  if (all.runs().empty()) {
    std::printf("no runs\n");
    return kExitOk;
  }
  remote::Table t({"ID", "STATE", "DONE", "FAILED", "ERROR", "SPEC", "TARGET", "BY", "CREATED"});
  for (const auto& r : all.runs())
    t.Add({absl::StrCat(r.id()), remote::EnumText(r.state()), absl::StrCat(Done(r.counts()), "/", r.counts().total()),
           absl::StrCat(r.counts().failed()), absl::StrCat(r.counts().error()), r.template_().spec_hash().substr(0, 12),
           absl::StrCat(r.template_().target_id()), r.submitted_by(), remote::FormatTime(r.created_at())});
  std::fputs(t.Render().c_str(), stdout);
  return kExitOk;
}

bool IdArg(const ParsedArgs& a, const char* sub, int64_t* id, int* code) {
  if (a.positional.size() != 1 || !remote::ParseId(a.positional[0], id)) {
    *code = Usage(absl::StrCat("run ", sub, " needs one run ID (a positive integer)"));
    return false;
  }
  return true;
}

void PrintRun(const v1::Run& r) {
  const v1::RunTemplate& t = r.template_();
  const v1::JobBudget& b = t.budget();
  std::printf("run %lld: %s\n", static_cast<long long>(r.id()), remote::EnumText(r.state()).c_str());
  std::printf("  spec          %s\n", t.spec_hash().c_str());
  std::printf("  target        %lld\n", static_cast<long long>(t.target_id()));
  std::printf("  jobs          %d/%d done: %s\n", Done(r.counts()), r.counts().total(), Counts(r.counts()).c_str());
  std::printf("  findings      %lld failing job%s%s\n", static_cast<long long>(r.findings()),
              r.findings() == 1 ? "" : "s",
              r.findings() > 0 ? absl::StrCat(" (dualswarm finding list --run ", r.id(), ")").c_str() : "");
  std::printf("  seed          %llu%s\n", static_cast<unsigned long long>(t.seed()),
              t.stop_at_first_finding() ? ", stops at the first finding" : "");
  if (b.explore_depth() > 0)
    std::printf("  per job       explores the spec to depth %d, at most %llu states, time budget %lld ms%s\n",
                b.explore_depth(), static_cast<unsigned long long>(b.explore_max_states()),
                static_cast<long long>(b.time_budget_ms()),
                t.gen().empty() ? "" : absl::StrCat(", gen ", t.gen()).c_str());
  else
    std::printf(
        "  per job       %llu steps, %d connections, %d in flight, response timeout %lld ms%s, network %s%s%s\n",
        static_cast<unsigned long long>(b.steps()), b.connections(), b.max_in_flight(),
        static_cast<long long>(b.response_timeout_ms()),
        b.time_budget_ms() > 0 ? absl::StrCat(", time budget ", b.time_budget_ms(), " ms").c_str() : "",
        b.network().empty() ? "tcp" : b.network().c_str(),
        t.gen().empty() ? "" : absl::StrCat(", gen ", t.gen()).c_str(),
        b.guide_candidates() > 1 ? absl::StrCat(", coverage-guided (", b.guide_candidates(), " candidates)").c_str()
                                 : "");
  std::printf("  submitted by  %s%s\n", r.submitted_by().c_str(),
              r.campaign_id() ? absl::StrCat(" (campaign ", r.campaign_id(), ")").c_str() : "");
  std::printf("  created       %s\n", remote::FormatTime(r.created_at()).c_str());
  std::printf("  started       %s\n", remote::FormatTime(r.started_at()).c_str());
  std::printf("  finished      %s\n", remote::FormatTime(r.finished_at()).c_str());
  if (!r.error().empty()) std::printf("  error         %s\n", r.error().c_str());
}

int Show(const ParsedArgs& a, bool cancel) {
  int64_t id = 0;
  int code = 0;
  if (!IdArg(a, cancel ? "cancel" : "show", &id, &code)) return code;
  std::unique_ptr<Client> client;
  if (int c = Connect(a, &client); c != kExitOk) return c;
  auto stub = v1::RunService::NewStub(client->channel());
  v1::Run run;
  bool ok;
  if (cancel) {
    v1::CancelRunRequest req;
    req.set_id(id);
    ok = remote::CallOk(
        *client, [&](grpc::ClientContext* ctx) { return stub->Cancel(ctx, req, &run); }, &code);
  } else {
    v1::GetRunRequest req;
    req.set_id(id);
    ok = remote::CallOk(
        *client, [&](grpc::ClientContext* ctx) { return stub->Get(ctx, req, &run); }, &code);
  }
  if (!ok) return code;
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(run).c_str());
  } else if (cancel) {
    std::printf("run %lld: %s (%d of %d jobs had finished, %d cancelled)\n", static_cast<long long>(run.id()),
                remote::EnumText(run.state()).c_str(), Done(run.counts()) - run.counts().cancelled(),
                run.counts().total(), run.counts().cancelled());
  } else {
    PrintRun(run);
  }
  return kExitOk;
}

// Branches never taken that `run coverage` lists without --all.
constexpr int kCoverageListed = 20;

int Coverage(const ParsedArgs& a) {
  int64_t id = 0;
  int code = 0;
  if (!IdArg(a, "coverage", &id, &code)) return code;
  std::unique_ptr<Client> client;
  if (int c = Connect(a, &client); c != kExitOk) return c;
  auto stub = v1::RunService::NewStub(client->channel());
  v1::GetRunCoverageRequest req;
  req.set_run_id(id);
  v1::Coverage cov;
  if (!remote::CallOk(
          *client, [&](grpc::ClientContext* ctx) { return stub->GetCoverage(ctx, req, &cov); }, &code))
    return code;
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(cov).c_str());
    return kExitOk;
  }
  std::printf("run %lld: %d of %d spec branches covered (%d %%) by %d completed jobs\n", static_cast<long long>(id),
              cov.covered(), cov.total(), cov.total() ? 100 * cov.covered() / cov.total() : 100, cov.jobs());
  const bool all = a.flags.count("all") > 0;
  int listed = 0, missed = 0;
  for (const v1::SpecBranch& b : cov.branches()) {
    if (b.covered()) continue;
    ++missed;
    if (!all && listed >= kCoverageListed) continue;
    if (listed++ == 0) std::printf("never taken:\n");
    std::printf("  %d:%d  %s: %s\n", b.line(), b.column(), b.scope().c_str(), b.label().c_str());
  }
  if (missed > listed) std::printf("  and %d more (--all lists them)\n", missed - listed);
  return kExitOk;
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kRunHelp, args.empty() ? stderr : stdout);
    std::fputs(remote::kConnectionHelp, args.empty() ? stderr : stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  std::string sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (WantsHelp(rest)) {
    std::fputs(kRunHelp, stdout);
    std::fputs(remote::kConnectionHelp, stdout);
    return kExitOk;
  }
  ParsedArgs a;
  std::string err;
  if (sub == "submit") {
    if (!remote::ParseRemoteArgs(rest,
                                 {"spec", "spec-name", "spec-file", "target", "jobs", "seed", "steps", "time-budget-ms",
                                  "connections", "max-in-flight", "response-timeout-ms", "network", "gen",
                                  "guide-candidates", "explore-depth", "explore-max-states"},
                                 {"stop-at-first-finding", "watch", "json", "coverage-guided"}, &a, &err))
      return Usage(err);
    return Submit(a);
  }
  if (sub == "list") {
    if (!remote::ParseRemoteArgs(rest, {"state", "spec", "target", "limit"}, {"json"}, &a, &err)) return Usage(err);
    return List(a);
  }
  if (sub == "show" || sub == "cancel") {
    if (!remote::ParseRemoteArgs(rest, {}, {"json"}, &a, &err)) return Usage(err);
    return Show(a, sub == "cancel");
  }
  if (sub == "coverage") {
    if (!remote::ParseRemoteArgs(rest, {}, {"json", "all"}, &a, &err)) return Usage(err);
    return Coverage(a);
  }
  if (sub == "watch") {
    if (!remote::ParseRemoteArgs(rest, {}, {"json"}, &a, &err)) return Usage(err);
    int64_t id = 0;
    int code = 0;
    if (!IdArg(a, "watch", &id, &code)) return code;
    std::unique_ptr<Client> client;
    if (int c = Connect(a, &client); c != kExitOk) return c;
    return Watch(*client, id, a.flags.count("json") > 0);
  }
  return Usage(absl::StrCat("unknown run command '", sub, "'"));
}

}  // namespace dualswarm::cli
