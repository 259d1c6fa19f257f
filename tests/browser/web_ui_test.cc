// The web UI in headless Chromium (Debian's chromium + chromium-driver),
// driven over chromedriver's W3C WebDriver HTTP API, against a real
// coordinator (embedded PostgreSQL) that serves it with --http-listen.
//
// The coordinator is populated as the worker daemon would do it: a real
// counterexample from `dualswarm test --save` against ds-ref-webdav mutant
// 6 (shrunk: one connection), and an unshrunk one over three connections
// (a second target, so a second finding), completed through WorkerService;
// a third run stays running with one leased job so live progress shows.
//
// It types the token into the UI, loads every page, checks what a correct
// render shows (run states, job rows with seeds/orders/masks, the SVG with
// one lane per connection and the rejected response highlighted, the
// reason, the replay command, spec source with line numbers, campaigns),
// clicks from a run to its finding, watches a running run's page update
// after a completion, and saves a screenshot of every page under
// ${CMAKE_BINARY_DIR}/test-artifacts/browser/ (printed).
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "dualswarm/v1/campaign.grpc.pb.h"
#include "dualswarm/v1/finding.grpc.pb.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "engine/harness/counterexample.h"
#include "engine/ir/json.h"
#include "tests/common/http_client.h"
#include "tests/common/processes.h"
#include "util/file_tail.h"

namespace {

namespace v1 = ::dualswarm::v1;
using dualswarm::testing::CommandResult;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::HttpRequest;
using dualswarm::testing::HttpResponse;
using dualswarm::testing::RunCommand;
using dualswarm::testing::Slurp;

const std::string kSrc = DUALSWARM_SOURCE_DIR;
const std::string kCli = DUALSWARM_CLI;
const std::string kWebdav = DS_REF_WEBDAV;
const std::string kResp = DS_REF_RESP;
const std::string kMemcached = DS_REF_MEMCACHED;
const std::string kProxy = DS_REF_PROXY;
const std::string kSync = DS_REF_SYNC;
const std::string kWorker = DUALSWARM_WORKER;
const std::string kArtifacts = DS_BROWSER_ARTIFACTS;

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// A WebDriver session on a chromedriver child process.
class Browser {
 public:
  // "" on success, else what went wrong.
  std::string Start(const std::string& dir) {
    port_ = dualswarm::testing::FreeLoopbackPort();
    log_ = dir + "/chromedriver.log";
    pid_ = dualswarm::testing::Spawn({"/usr/bin/chromedriver", absl::StrCat("--port=", port_)}, log_);
    if (pid_ < 0) return "cannot start /usr/bin/chromedriver (apt-get install chromium-driver)";
    bool ready = dualswarm::testing::WaitFor(
        [&] { return absl::StrContains(HttpRequest(port_, "GET", "/status").body, "\"ready\":true"); },
        std::chrono::seconds(20));
    if (!ready) return "chromedriver did not become ready:\n" + Slurp(log_);
    std::string caps = absl::StrCat(
        R"({"capabilities":{"alwaysMatch":{"browserName":"chrome","goog:chromeOptions":{"binary":"/usr/bin/chromium","args":[)",
        R"("--headless=new","--no-sandbox","--disable-gpu","--disable-dev-shm-usage","--window-size=1400,1000",)",
        R"("--no-first-run","--user-data-dir=)", dir, R"(/chrome-profile"]}}}})");
    HttpResponse r = HttpRequest(port_, "POST", "/session", caps, {}, 60);
    auto v = dualswarm::ir::ParseJson(r.body);
    if (r.status != 200 || !v.ok()) return "new session failed: " + r.body;
    const auto* value = v->Find("value");
    const auto* id = value ? value->Find("sessionId") : nullptr;
    if (id == nullptr || !id->is_string()) return "no sessionId in " + r.body;
    session_ = "/session/" + id->as_string();
    return "";
  }

  ~Browser() {
    if (!session_.empty()) HttpRequest(port_, "DELETE", session_);
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }

  // The "value" of a WebDriver command's response; fails the test on an error.
  std::string Command(const std::string& method, const std::string& path, const std::string& body = "") {
    HttpResponse r = HttpRequest(port_, method, session_ + path, body, {}, 60);
    EXPECT_EQ(r.status, 200) << method << " " << path << " " << body << ": " << r.body;
    return r.body;
  }

  void Go(const std::string& url) { Command("POST", "/url", absl::StrCat(R"({"url":)", JsonString(url), "}")); }

  // Runs `script` (a function body that returns a string) in the page.
  std::string Eval(const std::string& script) {
    std::string body =
        Command("POST", "/execute/sync", absl::StrCat(R"({"script":)", JsonString(script), R"(,"args":[]})"));
    auto v = dualswarm::ir::ParseJson(body);
    if (!v.ok()) return "";
    const auto* value = v->Find("value");
    return value != nullptr && value->is_string() ? value->as_string() : "";
  }

  // Waits up to 20 s for `condition` (a JS expression) to be true.
  bool WaitUntil(const std::string& condition) {
    return dualswarm::testing::WaitFor(
        [&] {
          return Eval(absl::StrCat("try { return (", condition, ") ? 'yes' : 'no'; } catch (e) { return 'no'; }")) ==
                 "yes";
        },
        std::chrono::seconds(20));
  }

  std::string Text(const std::string& css) {
    return Eval(absl::StrCat("const e = document.querySelector(", JsonString(css),
                             "); return e ? e.textContent : '<missing ' + ", JsonString(css), " + '>';"));
  }

  // The WebDriver element id of the first match of `css`.
  std::string Element(const std::string& css) {
    std::string body =
        Command("POST", "/element", absl::StrCat(R"({"using":"css selector","value":)", JsonString(css), "}"));
    auto v = dualswarm::ir::ParseJson(body);
    if (!v.ok() || v->Find("value") == nullptr || !v->Find("value")->is_map()) return "";
    for (const auto& [k, e] : v->Find("value")->as_map())
      if (e.is_string()) return e.as_string();
    return "";
  }

  void Click(const std::string& css) {
    std::string id = Element(css);
    ASSERT_FALSE(id.empty()) << "no element " << css;
    Command("POST", "/element/" + id + "/click", "{}");
  }

  void Type(const std::string& css, const std::string& text) {
    std::string id = Element(css);
    ASSERT_FALSE(id.empty()) << "no element " << css;
    Command("POST", "/element/" + id + "/value", absl::StrCat(R"({"text":)", JsonString(text), "}"));
  }

  // Saves a PNG screenshot as `path`.
  void Screenshot(const std::string& path) {
    std::string body = Command("GET", "/screenshot");
    auto v = dualswarm::ir::ParseJson(body);
    ASSERT_TRUE(v.ok() && v->Find("value") && v->Find("value")->is_string()) << body.substr(0, 200);
    std::string png;
    ASSERT_TRUE(absl::Base64Unescape(v->Find("value")->as_string(), &png));
    std::ofstream(path, std::ios::binary) << png;
    EXPECT_TRUE(absl::StartsWith(png, "\x89PNG")) << path;
  }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
  std::string log_;
  std::string session_;
};

class WebUiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/bin/chromedriver", X_OK) != 0 || access("/usr/bin/chromium", X_OK) != 0)
      GTEST_FAIL() << "needs Debian's chromium and chromium-driver (bash scripts/setup.sh installs them)";
    tmp_ = dualswarm::testing::MakeTempDir("ds-web-ui");
    ASSERT_FALSE(tmp_.empty());
    coordinator_ = std::make_unique<CoordinatorProcess>(CoordinatorProcess::Options{
        DUALSWARM_COORDINATOR, tmp_, "", {"--http-listen", "127.0.0.1:0", "--metrics-listen", ""}});
    std::string err = coordinator_->Start();
    ASSERT_EQ(err, "") << err;
    http_port_ = dualswarm::testing::PortAfter(coordinator_->log(), "http on 127.0.0.1:");
    ASSERT_GT(http_port_, 0);
    admin_ = coordinator_->Token("admin");
    submitter_ = coordinator_->Token("submitter");
    worker_ = coordinator_->Token("worker");
    ASSERT_FALSE(admin_.empty() || submitter_.empty() || worker_.empty());
    std::filesystem::create_directories(kArtifacts);  // each test case overwrites its own files
    std::cout << "screenshots: " << kArtifacts << std::endl;
  }

  void TearDown() override {
    coordinator_.reset();
    if (!tmp_.empty() && !HasFailure()) std::filesystem::remove_all(tmp_);
  }

  std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) { return dualswarm::testing::AuthContext(token); }

  // A counterexample document from `dualswarm test` against mutant 6.
  std::string Produce(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {"--spec", kSrc + "/specs/http_webdav.dspec", "--launch",
                                     kWebdav + " --port {port} --dir {dir} --mutant 6"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return ProduceWith(argv);
  }

  // A counterexample document from `dualswarm test ARGS --steps 2000`,
  // which must find one.
  std::string ProduceWith(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kCli, "test"};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const std::string& a : {std::string("--steps"), std::string("2000"), std::string("--save"), tmp_ + "/cx.json",
                                 std::string("--quiet")})
      argv.push_back(a);
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    return std::string(absl::StripTrailingAsciiWhitespace(Slurp(tmp_ + "/cx.json")));
  }

  // Uploads specs/FILE; its hash ("" when refused).
  std::string UploadSpec(const std::string& file) {
    auto specs = v1::SpecService::NewStub(coordinator_->channel());
    v1::CreateSpecRequest req;
    req.set_file_name(file);
    req.set_source(Slurp(kSrc + "/specs/" + file));
    v1::CreateSpecResponse resp;
    grpc::Status st = specs->Create(Ctx(submitter_).get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.spec().hash();
  }

  // Registers the test's worker (worker_id_), which then leases and completes.
  void RegisterWorker(int slots) {
    auto workers = v1::WorkerService::NewStub(coordinator_->channel());
    v1::RegisterWorkerRequest req;
    req.set_name("browser-test-worker");
    req.set_slots(slots);
    v1::RegisterWorkerResponse resp;
    grpc::Status st = workers->Register(Ctx(worker_).get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    worker_id_ = resp.worker_id();
  }

  int64_t AddTarget(const std::string& name, const std::string& adapter = "http",
                    const std::string& launch = kWebdav + " --port {port} --dir {dir} --mutant 6",
                    const std::string& descriptor_set = "", int nodes = 1, const std::string& nemesis = "",
                    int origins = 0) {
    v1::Target t;
    t.set_name(name);
    t.set_adapter(adapter);
    t.set_launch(launch);
    t.set_descriptor_set(descriptor_set);
    t.set_nodes(nodes);
    t.set_nemesis(nemesis);
    t.set_origins(origins);
    return CreateTarget(t);
  }

  int64_t CreateTarget(const v1::Target& target) {
    auto targets = v1::TargetService::NewStub(coordinator_->channel());
    v1::CreateTargetRequest req;
    *req.mutable_target() = target;
    v1::Target t;
    grpc::Status st = targets->Create(Ctx(admin_).get(), req, &t);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return t.id();
  }

  int64_t Submit(const std::string& hash, int64_t target, int jobs) {
    auto runs = v1::RunService::NewStub(coordinator_->channel());
    v1::SubmitRunRequest req;
    req.mutable_template_()->set_spec_hash(hash);
    req.mutable_template_()->set_target_id(target);
    req.mutable_template_()->set_jobs(jobs);
    req.mutable_template_()->set_seed(42);
    v1::Run run;
    grpc::Status st = runs->Submit(Ctx(submitter_).get(), req, &run);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return run.id();
  }

  std::vector<v1::LeasedJob> Lease(int max_jobs) {
    auto workers = v1::WorkerService::NewStub(coordinator_->channel());
    v1::LeaseJobsRequest req;
    req.set_worker_id(worker_id_);
    req.set_max_jobs(max_jobs);
    req.set_wait_ms(5000);
    v1::LeaseJobsResponse resp;
    grpc::Status st = workers->LeaseJobs(Ctx(worker_).get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return {resp.jobs().begin(), resp.jobs().end()};
  }

  void Complete(const v1::LeasedJob& job, const std::string* doc, int faults = 0) {
    auto workers = v1::WorkerService::NewStub(coordinator_->channel());
    v1::CompleteJobRequest req;
    req.set_worker_id(worker_id_);
    req.set_job_id(job.job_id());
    req.set_lease_token(job.lease_token());
    req.set_outcome(doc ? v1::JOB_OUTCOME_FAILED : v1::JOB_OUTCOME_PASSED);
    if (doc != nullptr) {
      auto parsed = dualswarm::harness::CounterexampleFromJson(*doc);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      v1::Counterexample* cx = req.mutable_counterexample();
      cx->set_kind(v1::VERDICT_KIND_SAFETY);
      cx->set_reason(parsed->verdict.reason);
      cx->set_diff(parsed->verdict.field);
      cx->set_signature(parsed->signature);
      cx->set_input_json("[]");
      cx->set_size(static_cast<int32_t>(parsed->shrunk_size));
      cx->set_unshrunk_size(static_cast<int32_t>(parsed->original_size));
      cx->set_document_json(*doc);
      req.set_reason(parsed->verdict.reason);
    }
    req.set_seconds(0.5);
    req.set_faults(faults);
    v1::CompleteJobResponse resp;
    grpc::Status st = workers->CompleteJob(Ctx(worker_).get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
  }

  // From run `run`'s page, clicks through to its finding; true once the
  // diagram shows the failing message.
  bool OpenFindingOfRun(Browser& b, const std::string& base, int64_t run) {
    b.Go(base + "#/runs/" + std::to_string(run));
    if (!b.WaitUntil("document.querySelector('#run-findings a.finding-link')")) return false;
    b.Click("#run-findings a.finding-link");
    return b.WaitUntil("document.querySelector('#diagram svg g.msg.failing')");
  }

  // Opens `url` and gives the page the submitter's token, as a user types it.
  void GoWithToken(Browser& b, const std::string& url) {
    b.Go(url);
    b.Type("#token-input", submitter_);
    b.Click("#token-save");
  }

  // Starts the browser on the targets page, with the token, once it lists
  // `targets` rows; the UI's base address into *base.
  ::testing::AssertionResult StartOnTargets(Browser& b, size_t targets, std::string* base) {
    if (std::string err = b.Start(tmp_); !err.empty()) return ::testing::AssertionFailure() << err;
    *base = absl::StrCat("http://127.0.0.1:", http_port_, "/");
    GoWithToken(b, *base + "#/targets");
    if (!b.WaitUntil(absl::StrCat("document.querySelectorAll('#targets tbody tr').length === ", targets)))
      return ::testing::AssertionFailure() << b.Text("main");
    return ::testing::AssertionSuccess();
  }

  std::string Shot(Browser& b, const std::string& name) {
    std::string path = kArtifacts + "/" + name + ".png";
    b.Screenshot(path);
    return path;
  }

  std::string tmp_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  int http_port_ = 0;
  std::string admin_, submitter_, worker_, worker_id_;
};

// The connections of a counterexample document's trace, and the label and
// first line of the reason of its verdict.
struct DocFacts {
  std::set<int64_t> conns;
  size_t messages = 0;  // sent and received observations
  int64_t label = 0;
  std::string reason;
  std::string shrink_summary;  // what the finding page says of its shrinking and replays
};

// The lane heads' server names of a round-robin cluster of `nodes`: a lane
// per connection number up to the largest in the trace.
std::string LaneNodes(const DocFacts& f, int nodes) {
  std::vector<std::string> names;
  const int64_t lanes = f.conns.empty() ? 1 : *f.conns.rbegin() + 1;
  for (int64_t c = 0; c < lanes; ++c) names.push_back(absl::StrCat("node ", c % nodes));
  return absl::StrJoin(names, ",");
}

DocFacts FactsOf(const std::string& doc) {
  DocFacts f;
  auto cx = dualswarm::harness::CounterexampleFromJson(doc);
  EXPECT_TRUE(cx.ok()) << cx.status();
  if (!cx.ok()) return f;
  for (const auto& o : cx->trace) {
    f.conns.insert(o.conn);
    if (o.kind == dualswarm::check::Observation::Kind::kSent ||
        o.kind == dualswarm::check::Observation::Kind::kReceived)
      ++f.messages;
  }
  f.label = cx->verdict.label;
  f.reason = cx->verdict.reason;
  const int64_t ms = std::llround(cx->shrink_seconds * 1000);  // as the document stores it
  f.shrink_summary = cx->shrink_reruns == 0
                         ? absl::StrCat("Not shrunk (", cx->original_size, " items).")
                         : absl::StrCat("Shrunk from ", cx->original_size, " to ", cx->shrunk_size, " items in ",
                                        cx->shrink_reruns, " reruns (", ms / 1000, ".", ms % 1000 / 100,
                                        " s): ", cx->shrink_complete ? "complete" : "stopped by its budget", ".");
  if (cx->repeat > 1)
    absl::StrAppend(&f.shrink_summary, " Sent ", cx->repeat,
                    " times over in one run (a rare race); the diagram is round ", cx->failed_round + 1,
                    ", where it failed.");
  if (cx->replays_verified > 0)
    absl::StrAppend(&f.shrink_summary, " Replayed on fresh SUTs: ", cx->replays_reproduced, " of ",
                    cx->replays_verified, " reproduced",
                    cx->replays_reproduced < cx->replays_verified ? " (flaky: the failure depends on timing)" : "",
                    ".");
  return f;
}

TEST_F(WebUiTest, PagesShowRunsJobsFindingsSpecsAndTheCounterexampleDiagram) {
  // Two real counterexamples: shrunk (one connection), and unshrunk over
  // three connections.
  std::string shrunk = Produce({});
  std::string wide = Produce({"--connections", "3", "--no-shrink"});
  DocFacts shrunk_facts = FactsOf(shrunk), wide_facts = FactsOf(wide);
  ASSERT_GT(shrunk_facts.label, 0);
  ASSERT_GT(wide_facts.conns.size(), 1u) << "the unshrunk counterexample uses one connection only";

  std::string hash = UploadSpec("http_webdav.dspec");
  ASSERT_FALSE(hash.empty());
  int64_t t1 = AddTarget("webdav-m6");
  v1::Target reset;  // as AddTarget makes it, with a reset command for shrinking reruns
  reset.set_name("webdav-m6-wide");
  reset.set_adapter("http");
  reset.set_launch(kWebdav + " --port {port} --dir {dir} --mutant 6");
  reset.set_reset_command("curl -fsS -X POST http://127.0.0.1:{port}/reset");
  int64_t t2 = CreateTarget(reset);

  RegisterWorker(8);

  // Run 1: 3 jobs, the first fails with the shrunk counterexample.
  int64_t run1 = Submit(hash, t1, 3);
  auto jobs = Lease(3);
  ASSERT_EQ(jobs.size(), 3u);
  Complete(jobs[0], &shrunk);
  Complete(jobs[1], nullptr);
  Complete(jobs[2], nullptr);
  // Run 2: 2 jobs, one fails with the wide counterexample (second target).
  int64_t run2 = Submit(hash, t2, 2);
  jobs = Lease(2);
  ASSERT_EQ(jobs.size(), 2u);
  Complete(jobs[0], &wide);
  Complete(jobs[1], nullptr);
  // Run 3: 4 jobs, one leased and left running.
  int64_t run3 = Submit(hash, t1, 4);
  std::vector<v1::LeasedJob> running = Lease(1);
  ASSERT_EQ(running.size(), 1u);

  // A campaign (nightly at 03:00 UTC) for the campaigns page.
  auto campaigns = v1::CampaignService::NewStub(coordinator_->channel());
  v1::CreateCampaignRequest creq;
  creq.mutable_campaign()->set_name("nightly-webdav");
  creq.mutable_campaign()->set_cron("0 3 * * *");
  creq.mutable_campaign()->mutable_template_()->set_spec_hash(hash);
  creq.mutable_campaign()->mutable_template_()->set_target_id(t1);
  creq.mutable_campaign()->mutable_template_()->set_jobs(8);
  v1::Campaign campaign;
  grpc::Status cst = campaigns->Create(Ctx(submitter_).get(), creq, &campaign);
  ASSERT_TRUE(cst.ok()) << cst.error_message();

  Browser b;
  std::string err = b.Start(tmp_);
  ASSERT_EQ(err, "") << err;
  std::string base = absl::StrCat("http://127.0.0.1:", http_port_, "/");

  // Without a token: the API refuses and the UI says so.
  b.Go(base + "#/runs");
  ASSERT_TRUE(b.WaitUntil("document.querySelector('.error-box')")) << b.Text("main");
  EXPECT_TRUE(absl::StrContains(b.Text(".error-box"), "UNAUTHENTICATED")) << b.Text("main");
  EXPECT_TRUE(absl::StrContains(b.Text("#banner"), "enter a token")) << b.Text("#banner");
  Shot(b, "00-no-token");

  // The token, typed once, is kept and sent as a header.
  b.Type("#token-input", submitter_);
  b.Click("#token-save");
  ASSERT_TRUE(b.WaitUntil("document.querySelectorAll('#runs tr.run-row').length === 3")) << b.Text("main");
  EXPECT_EQ(b.Text("#token-state"), "token set");
  EXPECT_EQ(b.Eval("return localStorage.getItem('dualswarm.token');"), submitter_);
  // Runs list: states, progress, findings (newest first).
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#runs tr.run-row')].map(r => r.dataset.run + ':' + "
                   "r.querySelector('.state').dataset.state + ':' + r.querySelector('.findings').textContent + ':' + "
                   "r.querySelector('.progress-text').textContent).join(' ');"),
            absl::StrCat(run3, ":running:0:0/4 ", run2, ":failed:1:2/2 ", run1, ":failed:1:3/3"));
  Shot(b, "01-runs");

  // Filter by state.
  b.Go(base + "#/runs?state=running");
  ASSERT_TRUE(
      b.WaitUntil("document.querySelectorAll('#runs tr.run-row').length === 1 && "
                  "document.querySelector('#filter-state').value === 'running'"))
      << b.Text("main");
  EXPECT_EQ(b.Eval("return document.querySelector('#runs tr.run-row').dataset.run;"), absl::StrCat(run3));

  // Run detail: jobs with seeds, branch orders, masks, states; the finding.
  b.Go(base + "#/runs/" + std::to_string(run1));
  ASSERT_TRUE(b.WaitUntil("document.querySelectorAll('#jobs tr.job-row').length === 3")) << b.Text("main");
  EXPECT_EQ(b.Eval("return document.querySelector('#run-state .state').dataset.state;"), "failed");
  auto run_jobs = v1::RunService::NewStub(coordinator_->channel());
  v1::ListJobsRequest jreq;
  jreq.set_run_id(run1);
  v1::ListJobsResponse jresp;
  ASSERT_TRUE(run_jobs->ListJobs(Ctx(submitter_).get(), jreq, &jresp).ok());
  ASSERT_EQ(jresp.jobs_size(), 3);
  std::string rows = b.Eval(
      "return [...document.querySelectorAll('#jobs tr.job-row')].map(r => [...r.cells].slice(0, 5)"
      ".map(c => c.textContent).join('|')).join('\\n');");
  std::vector<std::string> want;
  const char* orders[] = {"", "first", "last", "random", "most-constrained"};
  for (const auto& j : jresp.jobs())
    want.push_back(absl::StrCat(j.index(), "|", j.state() == v1::JOB_STATE_FAILED ? "failed" : "passed", "|", j.seed(),
                                "|", orders[j.branch_order()], "|",
                                j.feature_mask().empty() ? "all" : j.feature_mask()));
  EXPECT_EQ(rows, absl::StrJoin(want, "\n"));
  EXPECT_TRUE(absl::StrContains(rows, "failed")) << rows;
  Shot(b, "02-run-failed");

  // Click through to the finding.
  b.Click("#run-findings a.finding-link");
  ASSERT_TRUE(b.WaitUntil("location.hash.startsWith('#/findings/') && document.querySelector('#diagram svg')"))
      << b.Text("main");
  // One lane per connection, the rejected response highlighted, the reason.
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#diagram svg g.lane').length);"),
            std::to_string(shrunk_facts.conns.size()));
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#diagram svg g.msg.failing')]"
                   ".map(g => g.dataset.label + ':' + g.classList.contains('received')).join(',');"),
            absl::StrCat(shrunk_facts.label, ":true"));
  EXPECT_TRUE(absl::StrContains(b.Text("#diagram svg g.msg.failing text"), "REJECTED"));
  EXPECT_EQ(b.Eval("return getComputedStyle(document.querySelector('#diagram g.msg.failing line')).stroke;"),
            "rgb(192, 38, 45)");
  EXPECT_TRUE(absl::StrContains(b.Text("#verdict-reason"), shrunk_facts.reason)) << b.Text("#verdict-reason");
  EXPECT_TRUE(absl::StrContains(b.Text("#verdict-reason"), "explains response label")) << b.Text("#verdict-reason");
  EXPECT_TRUE(absl::StrContains(b.Text("#finding-reason"), "no execution of spec 'http_webdav'"));
  EXPECT_TRUE(absl::StartsWith(shrunk_facts.shrink_summary, "Shrunk from ")) << shrunk_facts.shrink_summary;
  EXPECT_EQ(b.Text("#shrink-summary"), shrunk_facts.shrink_summary);
  std::string replay = b.Text("#replay-command");
  EXPECT_TRUE(absl::StartsWith(replay, "dualswarm finding show ")) << replay;
  EXPECT_TRUE(absl::StrContains(replay, "--save cx.json && dualswarm replay cx.json --spec ")) << replay;
  EXPECT_TRUE(absl::StrContains(replay, "--mutant 6'")) << replay;
  // Every message of the trace is drawn, the request labels included.
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#diagram svg g.msg').length);"),
            std::to_string(shrunk_facts.messages));
  Shot(b, "03-finding");

  // The wide counterexample: one lane per connection.
  ASSERT_TRUE(OpenFindingOfRun(b, base, run2)) << b.Text("main");
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#diagram svg g.lane')].map(g => g.dataset.conn).join(',');"),
            absl::StrJoin(wide_facts.conns, ","));
  EXPECT_EQ(b.Text("#shrink-summary"), wide_facts.shrink_summary);
  EXPECT_TRUE(absl::StartsWith(wide_facts.shrink_summary, "Not shrunk")) << wide_facts.shrink_summary;
  EXPECT_EQ(b.Eval("return document.querySelector('#diagram svg g.msg.failing').dataset.label;"),
            std::to_string(wide_facts.label));
  Shot(b, "04-finding-three-connections");

  // A running run updates itself: complete its leased job and wait.
  b.Go(base + "#/runs/" + std::to_string(run3));
  ASSERT_TRUE(b.WaitUntil("document.querySelectorAll('#jobs tr.job-row[data-state=leased]').length === 1"))
      << b.Text("main");
  EXPECT_EQ(b.Eval("return document.querySelector('#run-state .state').dataset.state;"), "running");
  Shot(b, "05-run-running");
  Complete(running[0], nullptr);
  EXPECT_TRUE(
      b.WaitUntil("document.querySelectorAll('#jobs tr.job-row[data-state=passed]').length === 1 && "
                  "document.querySelector('#run-counts').textContent.includes('passed 1')"))
      << b.Text("main");

  // Specs: the list, and the source with line numbers.
  b.Go(base + "#/specs");
  ASSERT_TRUE(b.WaitUntil("document.querySelector('#specs a')")) << b.Text("main");
  b.Click("#specs a");
  ASSERT_TRUE(b.WaitUntil("document.querySelector('#source tr')")) << b.Text("main");
  std::string source = Slurp(kSrc + "/specs/http_webdav.dspec");
  std::vector<std::string> lines = absl::StrSplit(source, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#source tr').length);"), std::to_string(lines.size()));
  EXPECT_EQ(b.Eval("return [...document.querySelector('#L1').cells].map(c => c.textContent).join('|');"),
            "1|" + lines[0]);
  EXPECT_EQ(b.Eval(absl::StrCat("return document.querySelector('#L", lines.size(), "').cells[1].textContent;")),
            lines.back());
  Shot(b, "06-spec");

  // Targets, and campaigns (served or not).
  b.Go(base + "#/targets");
  ASSERT_TRUE(b.WaitUntil("document.querySelectorAll('#targets tbody tr').length === 2")) << b.Text("main");
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#targets .reset-command')].map(d => d.textContent).join();"),
            "shrinking reruns reset by: curl -fsS -X POST http://127.0.0.1:{port}/reset");
  Shot(b, "07-targets");
  b.Go(base + "#/campaigns");
  ASSERT_TRUE(b.WaitUntil("document.querySelector('.campaign')")) << b.Text("main");
  std::string card = b.Text(".campaign");
  EXPECT_TRUE(absl::StrContains(card, "nightly-webdav")) << card;
  EXPECT_TRUE(absl::StrContains(card, "0 3 * * *")) << card;
  EXPECT_TRUE(absl::StrContains(card, "active")) << card;
  EXPECT_TRUE(absl::StrContains(card, "03:00:00 UTC")) << card;  // the next fire time
  EXPECT_TRUE(absl::StrContains(card, "Not fired yet")) << card;
  Shot(b, "08-campaigns");

  // An unknown finding: the API's NOT_FOUND is shown.
  b.Go(base + "#/findings/987654");
  ASSERT_TRUE(b.WaitUntil("document.querySelector('.error-box')")) << b.Text("main");
  EXPECT_TRUE(absl::StrContains(b.Text(".error-box"), "NOT_FOUND")) << b.Text(".error-box");
  std::cout << "screenshots of every page in " << kArtifacts << std::endl;
}

// Targets of the other adapters: the targets page names each target's
// adapter (a grpc target with its descriptor set's size), and a finding over RESP (ds-ref-resp's mutant 3: `SET k v XX`
// on an absent key sets it) is drawn like any other, commands and typed replies as their IR.
TEST_F(WebUiTest, RespAndMemcachedTargetsAndARespFinding) {
  std::string doc = ProduceWith({"--spec", kSrc + "/specs/redis.dspec", "--adapter", "resp", "--launch",
                                 kResp + " --port {port} --dir {dir} --mutant 3"});
  DocFacts facts = FactsOf(doc);
  ASSERT_GT(facts.label, 0);

  std::string hash = UploadSpec("redis.dspec");
  ASSERT_FALSE(hash.empty());
  int64_t resp_target =
      AddTarget("redis-m3", "resp", kResp + " --port {port} --dir {dir} --mutant 3", "", 1, "pause,kill");
  AddTarget("memcached-ref", "memcached", kMemcached + " --port {port} --dir {dir}");
  auto descriptors = dualswarm::util::ReadFileTail(DS_ETCD_DESCRIPTOR_SET, 1 << 20);
  ASSERT_TRUE(descriptors.ok()) << descriptors.status();
  AddTarget("etcd", "grpc", "/usr/bin/etcd --listen-client-urls http://127.0.0.1:{port}", *descriptors, 3);

  // Drawn as if the target were a cluster of two, connections round-robin:
  // each lane names its node.
  const std::string one_node = "\"nodes\":1,\"connect_node\":-1";
  ASSERT_TRUE(absl::StrContains(doc, one_node)) << doc;
  doc = absl::StrReplaceAll(doc, {{one_node, "\"nodes\":2,\"connect_node\":-1"}});

  RegisterWorker(1);
  int64_t run = Submit(hash, resp_target, 1);
  auto jobs = Lease(1);
  ASSERT_EQ(jobs.size(), 1u);
  Complete(jobs[0], &doc, /*faults=*/3);

  Browser b;
  std::string err = b.Start(tmp_);
  ASSERT_EQ(err, "") << err;
  std::string base = absl::StrCat("http://127.0.0.1:", http_port_, "/");
  GoWithToken(b, base + "#/targets");
  ASSERT_TRUE(b.WaitUntil("document.querySelectorAll('#targets tbody tr').length === 3")) << b.Text("main");
  EXPECT_EQ(
      b.Eval("return [...document.querySelectorAll('#targets tbody tr')].map(r => r.cells[1].textContent + "
             "':' + r.cells[2].textContent).sort().join(',');"),
      absl::StrCat("etcd:grpc (descriptor set ", descriptors->size(), " bytes),memcached-ref:memcached,redis-m3:resp"));
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#targets tbody tr')].map(r => r.cells[1].textContent + "
                   "':' + r.cells[4].textContent).sort().join(',');"),
            "etcd:3 nodes, round-robin,memcached-ref:,redis-m3:");
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#targets tbody tr')].map(r => r.cells[1].textContent + "
                   "':' + r.cells[5].textContent).sort().join(',');"),
            "etcd:,memcached-ref:,redis-m3:pause,kill: a fault every ~1000 ms for 300 ms");
  Shot(b, "20-targets-of-every-adapter");

  // The run of a target with a nemesis: its faults, and each job's count.
  b.Go(base + "#/runs/" + std::to_string(run));
  ASSERT_TRUE(b.WaitUntil("document.querySelector('#jobs td.job-faults')")) << b.Text("main");
  EXPECT_EQ(b.Text("#jobs td.job-faults"), "3");
  EXPECT_EQ(b.Text("#run-faults"), "pause,kill: a fault every ~1000 ms for 300 ms; 3 injected in completed jobs");

  ASSERT_TRUE(OpenFindingOfRun(b, base, run)) << b.Text("main");
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#diagram svg g.msg').length);"),
            std::to_string(facts.messages));
  EXPECT_EQ(b.Eval("return document.querySelector('#diagram svg g.msg.failing').dataset.label;"),
            std::to_string(facts.label));
  std::string drawn = b.Text("#diagram svg");
  EXPECT_TRUE(absl::StrContains(drawn, "{\"cmd\":[\"SET\"")) << drawn;
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#diagram svg g.lane-head text.muted')]"
                   ".map(t => t.textContent).join(',');"),
            LaneNodes(facts, 2))
      << "one lane per connection, named by the node it talks to";
  EXPECT_TRUE(absl::StrContains(b.Text("#finding-reason"), "no execution of spec 'redis'")) << b.Text("main");
  Shot(b, "21-resp-finding");
}

// The pages over a real swarm run: two dualswarm-worker daemons' worth of
// slots run the jobs against mutant 6, shrink the finding and report it;
// the browser goes from the runs list to the run and on to its finding.
// An intermediary's finding (ds-ref-proxy's mutant 3 forwards the
// client's Host): the targets page shows the target's origin endpoints,
// and the diagram draws the origin connections as lanes after the clients',
// the rejected request the proxy sent the origin highlighted there.
TEST_F(WebUiTest, AnIntermediarysFindingDrawsItsOriginLanes) {
  std::string doc = ProduceWith({"--spec", kSrc + "/specs/http_proxy.dspec", "--origins", "1", "--no-shrink",
                                 "--launch", kProxy + " --port {port} --origin-port {origin_port} --mutant 3"});
  DocFacts facts = FactsOf(doc);
  ASSERT_GT(facts.label, 0);
  ASSERT_TRUE(absl::StrContains(doc, "\"side\":\"origin\"")) << doc;
  // The lanes the trace needs: its client connections, then its origin ones.
  auto cx = dualswarm::harness::CounterexampleFromJson(doc);
  ASSERT_TRUE(cx.ok()) << cx.status();
  int client_lanes = 1, origin_lanes = 0;
  for (const auto& o : cx->trace) {
    if (o.side == dualswarm::check::Side::kOrigin)
      origin_lanes = std::max(origin_lanes, static_cast<int>(o.conn) + 1);
    else
      client_lanes = std::max(client_lanes, static_cast<int>(o.conn) + 1);
  }
  ASSERT_GE(origin_lanes, 1);
  std::vector<std::string> heads;
  for (int c = 0; c < client_lanes; ++c) heads.push_back(absl::StrCat("conn ", c));
  for (int c = 0; c < origin_lanes; ++c) heads.push_back(absl::StrCat("origin conn ", c));
  std::string hash = UploadSpec("http_proxy.dspec");
  ASSERT_FALSE(hash.empty());
  int64_t target = AddTarget("proxy-m3", "http", kProxy + " --port {port} --origin-port {origin_port} --mutant 3", "",
                             1, "", /*origins=*/1);
  RegisterWorker(1);
  int64_t run = Submit(hash, target, 1);
  auto jobs = Lease(1);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].target().origins(), 1);
  Complete(jobs[0], &doc);

  Browser b;
  std::string base;
  ASSERT_TRUE(StartOnTargets(b, 1, &base));
  EXPECT_EQ(b.Eval("return document.querySelector('#targets tbody tr').cells[6].textContent;"), "1") << b.Text("main");
  ASSERT_TRUE(OpenFindingOfRun(b, base, run)) << b.Text("main");
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#diagram svg g.lane-head')]"
                   ".map(h => h.querySelector('text').textContent).join(',');"),
            absl::StrJoin(heads, ","));
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#diagram svg g.msg').length);"),
            std::to_string(facts.messages));
  EXPECT_EQ(b.Eval("return document.querySelector('#diagram svg g.msg.failing').classList.contains('origin') ? "
                   "'origin' : 'client';"),
            "origin");
  EXPECT_TRUE(absl::StrContains(b.Text("#diagram svg g.msg.failing text"), "o#")) << b.Text("#diagram svg");
  Shot(b, "22-intermediary-finding");
}

// A file synchronizer's finding (ds-ref-sync's mutant 2 loses a
// deletion): one lane, the tester acting on the replicas, and each row
// reads as an operation, a run or a tree rather than clipped JSON. The
// targets page shows the user the target's program runs as.
TEST_F(WebUiTest, AFileSynchronizersFindingReadsAsOperationsAndTrees) {
  const std::string launch = kSync + " {a} {b} {dir}/archive --mutant 2";
  std::string doc = ProduceWith({"--spec", kSrc + "/specs/filesync.dspec", "--launch", launch});
  DocFacts facts = FactsOf(doc);
  ASSERT_GT(facts.label, 0);
  std::string hash = UploadSpec("filesync.dspec");
  ASSERT_FALSE(hash.empty());
  v1::Target sync;
  sync.set_name("sync-m2");
  sync.set_adapter("fs");
  sync.set_launch(launch);
  sync.set_run_as("nobody");
  int64_t target = CreateTarget(sync);
  RegisterWorker(1);
  int64_t run = Submit(hash, target, 1);
  auto jobs = Lease(1);
  ASSERT_EQ(jobs.size(), 1u);
  Complete(jobs[0], &doc);

  Browser b;
  std::string base;
  ASSERT_TRUE(StartOnTargets(b, 1, &base));
  EXPECT_EQ(b.Text("#targets tbody tr td:nth-child(3)"), "fs (as nobody)");
  ASSERT_TRUE(OpenFindingOfRun(b, base, run)) << b.Text("main");
  EXPECT_EQ(b.Eval("return [...document.querySelectorAll('#diagram svg g.lane-head text')]"
                   ".map(t => t.textContent).join(',');"),
            "tester,replicas a, b · program");
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#diagram svg g.msg').length);"),
            std::to_string(facts.messages));
  const std::string failing = b.Text("#diagram svg g.msg.failing text");
  EXPECT_TRUE(absl::StrContains(failing, "tree:") && absl::StrContains(failing, "REJECTED")) << failing;
  const std::string drawn = b.Text("#diagram svg");
  EXPECT_TRUE(absl::StrContains(drawn, "→ #")) << drawn;
  EXPECT_TRUE(absl::StrContains(drawn, " run")) << drawn;
  EXPECT_FALSE(absl::StrContains(drawn, "\"op\"")) << "no request drawn as JSON: " << drawn;
  Shot(b, "23-file-synchronizer-finding");
}

TEST_F(WebUiTest, ARealSwarmRunFromTheRunsListToItsFinding) {
  auto specs = v1::SpecService::NewStub(coordinator_->channel());
  v1::CreateSpecRequest sreq;
  sreq.set_file_name("http_webdav.dspec");
  sreq.set_source(Slurp(kSrc + "/specs/http_webdav.dspec"));
  v1::CreateSpecResponse sresp;
  ASSERT_TRUE(specs->Create(Ctx(submitter_).get(), sreq, &sresp).ok());
  int64_t target = AddTarget("webdav-m6");
  int64_t run_id = Submit(sresp.spec().hash(), target, 4);

  std::string worker_log = tmp_ + "/worker.log";
  pid_t worker =
      dualswarm::testing::Spawn({kWorker, "--coordinator", coordinator_->address(), "--slots", "2", "--work-dir",
                                 tmp_ + "/worker", "--lease-wait-ms", "500", "--shrink-time", "20"},
                                worker_log, {{"DUALSWARM_TOKEN", worker_}});
  ASSERT_GT(worker, 0);
  auto runs = v1::RunService::NewStub(coordinator_->channel());
  v1::Run run;
  bool done = dualswarm::testing::WaitFor(
      [&] {
        v1::GetRunRequest req;
        req.set_id(run_id);
        run = v1::Run();
        (void)runs->Get(Ctx(submitter_).get(), req, &run);
        return run.state() == v1::RUN_STATE_FAILED || run.state() == v1::RUN_STATE_PASSED ||
               run.state() == v1::RUN_STATE_ERROR;
      },
      std::chrono::seconds(120));
  kill(worker, SIGTERM);
  waitpid(worker, nullptr, 0);
  ASSERT_TRUE(done) << Slurp(worker_log);
  ASSERT_EQ(run.state(), v1::RUN_STATE_FAILED) << run.DebugString() << Slurp(worker_log);

  // What the worker reported: the finding's smallest counterexample.
  auto findings = v1::FindingService::NewStub(coordinator_->channel());
  v1::ListFindingsRequest lreq;
  lreq.set_run_id(run_id);
  v1::ListFindingsResponse lresp;
  ASSERT_TRUE(findings->List(Ctx(submitter_).get(), lreq, &lresp).ok());
  ASSERT_EQ(lresp.findings_size(), 1);
  v1::GetFindingRequest freq;
  freq.set_id(lresp.findings(0).id());
  v1::Finding finding;
  ASSERT_TRUE(findings->Get(Ctx(submitter_).get(), freq, &finding).ok());
  ASSERT_GE(finding.counterexamples_size(), 1);
  DocFacts facts = FactsOf(finding.counterexamples(0).document_json());
  ASSERT_GT(facts.label, 0);

  Browser b;
  std::string err = b.Start(tmp_);
  ASSERT_EQ(err, "") << err;
  std::string base = absl::StrCat("http://127.0.0.1:", http_port_, "/");
  GoWithToken(b, base + "#/runs");
  ASSERT_TRUE(b.WaitUntil(absl::StrCat("document.querySelector('#runs tr.run-row[data-run=\"", run_id,
                                       "\"] .state')?.dataset.state === 'failed'")))
      << b.Text("main");
  EXPECT_EQ(b.Eval(absl::StrCat("return document.querySelector('#runs tr.run-row[data-run=\"", run_id,
                                "\"] .progress-text').textContent;")),
            "4/4");
  Shot(b, "10-real-run-runs");
  // Runs list -> run: the jobs the workers ran, each with its seed and state.
  b.Go(base + "#/runs/" + std::to_string(run_id));
  ASSERT_TRUE(b.WaitUntil("document.querySelectorAll('#jobs tr.job-row').length === 4")) << b.Text("main");
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#jobs tr.job-row[data-state=failed]').length);"),
            std::to_string(run.counts().failed()));
  Shot(b, "11-real-run");
  // The spec coverage the workers reported (docs/coverage.md): the union over
  // the run's jobs, on the run page and marked on the spec's source.
  v1::GetRunCoverageRequest creq;
  creq.set_run_id(run_id);
  v1::Coverage coverage;
  grpc::Status got_coverage = runs->GetCoverage(Ctx(submitter_).get(), creq, &coverage);
  ASSERT_TRUE(got_coverage.ok()) << got_coverage.error_message();
  EXPECT_EQ(coverage.spec_hash(), sresp.spec().hash());
  EXPECT_GE(coverage.jobs(), 1);
  EXPECT_LE(coverage.jobs(), 4);
  EXPECT_GT(coverage.covered(), 0);
  EXPECT_LT(coverage.covered(), coverage.total()) << "the reference server never omits an ETag";
  ASSERT_EQ(coverage.branches_size(), coverage.total());
  std::set<int> lines, fully_covered_lines, uncovered_lines;
  std::map<int, std::pair<int, int>> per_line;  // line -> (covered, branches)
  for (const v1::SpecBranch& br : coverage.branches()) {
    per_line[br.line()].first += br.covered();
    per_line[br.line()].second += 1;
  }
  for (const auto& [line, n] : per_line) {
    lines.insert(line);
    if (n.first == n.second) fully_covered_lines.insert(line);
    if (n.first == 0) uncovered_lines.insert(line);
  }
  ASSERT_TRUE(b.WaitUntil("document.querySelector('#coverage-summary')")) << b.Text("main");
  EXPECT_EQ(b.Text("#coverage-summary"),
            absl::StrCat(coverage.covered(), " of ", coverage.total(), " branches covered (",
                         100 * coverage.covered() / coverage.total(), " %)"));
  b.Click("#coverage-source");
  ASSERT_TRUE(b.WaitUntil("location.hash.includes('?run=') && document.querySelector('#spec-coverage')"))
      << b.Text("main");
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#source tr.cov-all, #source tr.cov-some, "
                   "#source tr.cov-none').length);"),
            std::to_string(lines.size()));
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#source tr.cov-all').length);"),
            std::to_string(fully_covered_lines.size()));
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#source tr.cov-none').length);"),
            std::to_string(uncovered_lines.size()));
  ASSERT_FALSE(uncovered_lines.empty());
  EXPECT_EQ(
      b.Eval(absl::StrCat("return document.querySelector('#source tr#L", *uncovered_lines.begin(), "').className;")),
      "cov-none");
  Shot(b, "11b-real-run-coverage");
  b.Go(base + "#/runs/" + std::to_string(run_id));
  ASSERT_TRUE(b.WaitUntil("document.querySelector('#run-findings a.finding-link')")) << b.Text("main");
  // Run -> finding: the worker's shrunk counterexample, drawn.
  b.Click("#run-findings a.finding-link");
  ASSERT_TRUE(
      b.WaitUntil("location.hash.startsWith('#/findings/') && document.querySelector('#diagram svg g.msg.failing')"))
      << b.Text("main");
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#diagram svg g.lane').length);"),
            std::to_string(facts.conns.size()));
  EXPECT_EQ(b.Eval("return document.querySelector('#diagram svg g.msg.failing').dataset.label;"),
            std::to_string(facts.label));
  EXPECT_EQ(b.Eval("return String(document.querySelectorAll('#diagram svg g.msg').length);"),
            std::to_string(facts.messages));
  EXPECT_TRUE(absl::StrContains(b.Text("#verdict-reason"), facts.reason)) << b.Text("#verdict-reason");
  Shot(b, "12-real-run-finding");
}

}  // namespace
