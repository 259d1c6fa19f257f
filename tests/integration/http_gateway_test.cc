// The coordinator's HTTP gateway (--http-listen) through the real binary:
// JSON that is the protobuf JSON mapping of the same gRPC responses, the
// same tokens and roles, gRPC codes mapped to HTTP statuses with a
// {code, message} body, query and path parameters, the embedded web UI,
// and garbage: malformed request lines, oversized heads and bodies, binary
// noise, NULs, half-sent requests and many connections at once — after all
// of which the server still answers correctly.
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "tests/common/http_client.h"
#include "tests/common/processes.h"

namespace {

namespace v1 = ::dualswarm::v1;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::HttpRequest;
using dualswarm::testing::HttpResponse;
using dualswarm::testing::ParseHttpResponse;
using dualswarm::testing::SendRaw;

const std::string kSrc = DUALSWARM_SOURCE_DIR;

class HttpGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = dualswarm::testing::MakeTempDir("ds-http-gw");
    ASSERT_FALSE(tmp_.empty());
    coordinator_ = std::make_unique<CoordinatorProcess>(CoordinatorProcess::Options{
        DUALSWARM_COORDINATOR, tmp_, "", {"--http-listen", "127.0.0.1:0", "--metrics-listen", ""}});
    std::string err = coordinator_->Start();
    ASSERT_EQ(err, "") << err;
    port_ = dualswarm::testing::PortAfter(coordinator_->log(), "http on 127.0.0.1:");
    ASSERT_GT(port_, 0);
    admin_ = coordinator_->Token("admin");
    submitter_ = coordinator_->Token("submitter");
    worker_ = coordinator_->Token("worker");
  }
  void TearDown() override {
    coordinator_.reset();
    if (!HasFailure()) std::filesystem::remove_all(tmp_);
  }

  HttpResponse Get(const std::string& target, const std::string& token) {
    std::map<std::string, std::string> h;
    if (!token.empty()) h["Authorization"] = "Bearer " + token;
    return HttpRequest(port_, "GET", target, "", h);
  }

  // A spec, a target and a 3-job run.
  int64_t Populate() {
    auto specs = v1::SpecService::NewStub(coordinator_->channel());
    v1::CreateSpecRequest sreq;
    sreq.set_file_name("kv.dspec");
    sreq.set_source(dualswarm::testing::Slurp(kSrc + "/specs/kv.dspec"));
    v1::CreateSpecResponse sresp;
    EXPECT_TRUE(specs->Create(dualswarm::testing::AuthContext(submitter_).get(), sreq, &sresp).ok());
    hash_ = sresp.spec().hash();
    auto targets = v1::TargetService::NewStub(coordinator_->channel());
    v1::CreateTargetRequest treq;
    treq.mutable_target()->set_name("kv");
    treq.mutable_target()->set_adapter("jsonl");
    treq.mutable_target()->set_address("127.0.0.1:9");
    v1::Target t;
    EXPECT_TRUE(targets->Create(dualswarm::testing::AuthContext(admin_).get(), treq, &t).ok());
    auto runs = v1::RunService::NewStub(coordinator_->channel());
    v1::SubmitRunRequest rreq;
    rreq.mutable_template_()->set_spec_hash(hash_);
    rreq.mutable_template_()->set_target_id(t.id());
    rreq.mutable_template_()->set_jobs(3);
    v1::Run run;
    EXPECT_TRUE(runs->Submit(dualswarm::testing::AuthContext(submitter_).get(), rreq, &run).ok());
    return run.id();
  }

  std::string tmp_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  int port_ = 0;
  std::string admin_, submitter_, worker_, hash_;
};

TEST_F(HttpGatewayTest, JsonIsTheProtobufMappingOfTheSameRpcs) {
  int64_t run = Populate();
  // GET /api/v1/runs/ID is RunService.Get, printed as `dualswarm --json` prints it.
  HttpResponse r = Get(absl::StrCat("/api/v1/runs/", run), submitter_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["content-type"], "application/json");
  auto runs = v1::RunService::NewStub(coordinator_->channel());
  v1::GetRunRequest gq;
  gq.set_id(run);
  v1::Run via_grpc;
  ASSERT_TRUE(runs->Get(dualswarm::testing::AuthContext(submitter_).get(), gq, &via_grpc).ok());
  v1::Run via_http;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.body, &via_http).ok()) << r.body;
  EXPECT_EQ(via_http.SerializeAsString(), via_grpc.SerializeAsString());
  EXPECT_TRUE(absl::StrContains(r.body, "\"state\":\"RUN_STATE_QUEUED\"")) << r.body;

  // Lists with filters from the query (proto or JSON names, short enum names).
  for (const char* q :
       {"?state=queued", "?state=RUN_STATE_QUEUED", "?state=1", "?pageSize=1", "?page_size=1&state=queued"}) {
    r = Get(absl::StrCat("/api/v1/runs", q), submitter_);
    ASSERT_EQ(r.status, 200) << q << r.body;
    v1::ListRunsResponse list;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.body, &list).ok()) << r.body;
    ASSERT_EQ(list.runs_size(), 1) << q;
    EXPECT_EQ(list.runs(0).id(), run);
  }
  r = Get("/api/v1/runs?state=failed", submitter_);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(absl::StrContains(r.body, "\"runs\":[]")) << r.body;

  // The run's jobs (RunService.ListJobs): seeds, branch orders, masks, states.
  r = Get(absl::StrCat("/api/v1/runs/", run, "/jobs"), submitter_);
  ASSERT_EQ(r.status, 200) << r.body;
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.body, &jobs).ok()) << r.body;
  ASSERT_EQ(jobs.jobs_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(jobs.jobs(i).index(), i);
    EXPECT_EQ(jobs.jobs(i).state(), v1::JOB_STATE_QUEUED);
    EXPECT_NE(jobs.jobs(i).seed(), 0u);
    EXPECT_NE(jobs.jobs(i).branch_order(), v1::BRANCH_ORDER_UNSPECIFIED);
  }
  // Paged: one at a time, by index.
  r = Get(absl::StrCat("/api/v1/runs/", run, "/jobs?page_size=2"), submitter_);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.body, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 2);
  EXPECT_EQ(jobs.next_page_token(), "2");
  r = Get(absl::StrCat("/api/v1/runs/", run, "/jobs?page_size=2&page_token=2"), submitter_);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.body, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).index(), 2);
  EXPECT_EQ(jobs.next_page_token(), "");
  r = Get(absl::StrCat("/api/v1/runs/", run, "/jobs?state=passed"), submitter_);
  EXPECT_TRUE(absl::StrContains(r.body, "\"jobs\":[]")) << r.body;

  // Specs (with source), targets, findings.
  r = Get("/api/v1/specs/" + hash_, submitter_);
  ASSERT_EQ(r.status, 200) << r.body;
  v1::Spec spec;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.body, &spec).ok());
  EXPECT_EQ(spec.source(), dualswarm::testing::Slurp(kSrc + "/specs/kv.dspec"));
  r = Get("/api/v1/specs", submitter_);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(absl::StrContains(r.body, hash_));
  r = Get("/api/v1/targets", submitter_);
  EXPECT_TRUE(absl::StrContains(r.body, "\"name\":\"kv\"")) << r.body;
  r = Get("/api/v1/targets/1", submitter_);
  EXPECT_EQ(r.status, 200) << r.body;
  r = Get(absl::StrCat("/api/v1/findings?run_id=", run), submitter_);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(absl::StrContains(r.body, "\"findings\":[]")) << r.body;
  // A trailing slash is the same route; HEAD has no body.
  EXPECT_EQ(Get("/api/v1/specs/", submitter_).status, 200);
  r = HttpRequest(port_, "HEAD", "/api/v1/specs", "", {{"Authorization", "Bearer " + submitter_}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
}

TEST_F(HttpGatewayTest, TokensRolesAndErrorCodes) {
  int64_t run = Populate();
  struct Case {
    std::string target;
    std::map<std::string, std::string> headers;
    int status;
    std::string code;
    std::string message;
  };
  std::string path = absl::StrCat("/api/v1/runs/", run);
  std::vector<Case> cases = {
      {path, {}, 401, "UNAUTHENTICATED", "missing bearer token"},
      {path, {{"Authorization", "Bearer dst_" + std::string(64, '0')}}, 401, "UNAUTHENTICATED", ""},
      {path, {{"Authorization", "Basic YWRtaW46YWRtaW4="}}, 401, "UNAUTHENTICATED", "malformed"},
      {path, {{"Authorization", "Bearer " + worker_}}, 403, "PERMISSION_DENIED", "role \\\"worker\\\""},
      {path, {{"Authorization", "bearer " + submitter_}}, 200, "", ""},
      {path, {{"Authorization", "Bearer " + admin_}}, 200, "", ""},
      {"/api/v1/runs/987654", {{"Authorization", "Bearer " + submitter_}}, 404, "NOT_FOUND", "no run 987654"},
      {"/api/v1/runs/0", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "positive"},
      {"/api/v1/runs/abc", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "\\\"id\\\""},
      {"/api/v1/runs?page_size=501", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "page_size"},
      {"/api/v1/runs?state=bogus",
       {{"Authorization", "Bearer " + submitter_}},
       400,
       "INVALID_ARGUMENT",
       "RUN_STATE_FAILED"},
      {"/api/v1/runs?bogus=1", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "not a field"},
      {"/api/v1/runs?template=1", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "not a field"},
      {"/api/v1/runs?page_size=%zz", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "percent"},
      {"/api/v1/runs?access_token=" + submitter_, {}, 400, "INVALID_ARGUMENT", "Authorization"},
      {"/api/v1/specs/feed", {{"Authorization", "Bearer " + submitter_}}, 404, "NOT_FOUND", "no spec"},
      {"/api/v1/nothing", {{"Authorization", "Bearer " + submitter_}}, 404, "NOT_FOUND", "no API route"},
      {absl::StrCat("/api/v1/runs/", run, "/jobs?state=42"),
       {{"Authorization", "Bearer " + submitter_}},
       400,
       "INVALID_ARGUMENT",
       "job state"},
      // Invalid UTF-8 in a string parameter: 400 with a message (it was a 500
      // INTERNAL with none, answered before the token was looked at).
      {"/api/v1/specs?name=%ff%fe",
       {{"Authorization", "Bearer " + submitter_}},
       400,
       "INVALID_ARGUMENT",
       "parameter \\\"name\\\": not valid UTF-8"},
      {"/api/v1/specs/%c0%af", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "UTF-8"},
      {"/api/v1/specs?name=a%00b", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "NUL"},
      {"/api/v1/runs/1%00", {{"Authorization", "Bearer " + submitter_}}, 400, "INVALID_ARGUMENT", "NUL"},
      // Authentication comes first: bad parameters tell a caller without a
      // valid token (or with the wrong role) nothing.
      {"/api/v1/specs?name=%ff%fe", {}, 401, "UNAUTHENTICATED", "missing bearer token"},
      {"/api/v1/runs?bogus=1", {{"Authorization", "Bearer dst_" + std::string(64, '0')}}, 401, "UNAUTHENTICATED", ""},
      {"/api/v1/runs?page_size=%zz", {{"Authorization", "Bearer " + worker_}}, 403, "PERMISSION_DENIED", "worker"},
      {"/api/v1/runs/abc", {}, 401, "UNAUTHENTICATED", ""},
  };
  for (const Case& c : cases) {
    HttpResponse r = HttpRequest(port_, "GET", c.target, "", c.headers);
    EXPECT_EQ(r.status, c.status) << c.target << " " << r.body;
    if (!c.code.empty()) {
      EXPECT_TRUE(absl::StartsWith(r.body, absl::StrCat("{\"code\":\"", c.code, "\",\"message\":\"")))
          << c.target << " " << r.body;
      EXPECT_TRUE(absl::StrContains(r.body, c.message)) << c.target << " " << r.body;
      EXPECT_EQ(r.headers["content-type"], "application/json");
    }
  }
  // Campaigns: UNIMPLEMENTED (501) until CampaignService is served, then 200.
  HttpResponse r = Get("/api/v1/campaigns", submitter_);
  EXPECT_TRUE(r.status == 501 || r.status == 200) << r.status << " " << r.body;
  // Only GET and HEAD.
  r = HttpRequest(port_, "POST", "/api/v1/runs", "{}", {{"Authorization", "Bearer " + submitter_}});
  EXPECT_EQ(r.status, 405) << r.body;
  EXPECT_EQ(r.headers["allow"], "GET, HEAD");
  r = HttpRequest(port_, "DELETE", path, "", {{"Authorization", "Bearer " + admin_}});
  EXPECT_EQ(r.status, 405);
}

TEST_F(HttpGatewayTest, ServesTheWebUi) {
  HttpResponse r = HttpRequest(port_, "GET", "/");
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(absl::StartsWith(r.headers["content-type"], "text/html")) << r.headers["content-type"];
  EXPECT_TRUE(absl::StrContains(r.headers["content-security-policy"], "default-src 'self'"));
  EXPECT_EQ(r.body, dualswarm::testing::Slurp(kSrc + "/web/index.html"));
  r = HttpRequest(port_, "GET", "/app.js");
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(absl::StartsWith(r.headers["content-type"], "text/javascript"));
  EXPECT_EQ(r.body, dualswarm::testing::Slurp(kSrc + "/web/app.js"));
  // An encoded NUL ends civetweb's decoded path: "/app.js%00.html" served app.js.
  for (const char* nul : {"/app.js%00.html", "/index.html%00", "/%00", "/api/v1/specs%00/x"}) {
    r = HttpRequest(port_, "GET", nul);
    EXPECT_EQ(r.status, 400) << nul << " " << r.body;
    EXPECT_TRUE(absl::StrContains(r.body, "NUL (%00) in the path")) << nul << " " << r.body;
  }
  r = HttpRequest(port_, "GET", "/app%2ejs");  // escapes still work
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, dualswarm::testing::Slurp(kSrc + "/web/app.js"));
  for (const char* bad : {"/../CMakeLists.txt", "/%2e%2e/CMakeLists.txt", "/.hidden", "/nope.html", "/app.js/..",
                          "//etc/passwd", "/a%00b", "/%2e%2e%2fCMakeLists.txt"}) {
    r = HttpRequest(port_, "GET", bad);
    EXPECT_TRUE(r.status == 404 || r.status == 400) << bad << " " << r.status << " " << r.body;
    EXPECT_FALSE(absl::StrContains(r.body, "cmake_minimum_required")) << bad;
  }
}

TEST_F(HttpGatewayTest, GarbageAndOversizedRequestsDoNotHurtIt) {
  std::vector<std::string> garbage = {
      "",
      "\r\n\r\n",
      "GET\r\n\r\n",
      "GET / HTTP/9.9\r\n\r\n",
      "HELLO WORLD\r\n\r\n",
      "GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
      "GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
      "GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n",
      std::string("GET /\0/ HTTP/1.1\r\n\r\n", 20),
      "GET /api/v1/runs?" + std::string(100000, 'a') + " HTTP/1.1\r\n\r\n",  // huge request line
      "GET / HTTP/1.1\r\nX-Big: " + std::string(200000, 'b') + "\r\n\r\n",   // huge header
      "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n" + std::string(5000000, '{'),
  };
  std::string noise;
  for (int i = 0; i < 65536; ++i) noise += static_cast<char>((i * 7919 + 13) & 0xff);
  garbage.push_back(noise);
  for (size_t i = 0; i < garbage.size(); ++i) {
    std::string resp = SendRaw(port_, garbage[i], 15);
    // Either a 4xx/5xx answer or a closed connection; never a 200 or a hang.
    HttpResponse r = ParseHttpResponse(resp);
    EXPECT_TRUE(r.status == 0 || r.status >= 400) << "garbage " << i << ": " << resp.substr(0, 200);
  }
  // Half a request, then silence: the server gives up on it (request
  // timeout) without blocking others.
  int idle = dualswarm::testing::ConnectLoopback(port_);
  ASSERT_GE(idle, 0);
  std::string half = "GET /api/v1/runs HTTP/1.1\r\nHost: x\r\n";
  ASSERT_EQ(send(idle, half.data(), half.size(), MSG_NOSIGNAL), static_cast<ssize_t>(half.size()));
  // Many clients at once.
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 32; ++i)
    threads.emplace_back([&] {
      HttpResponse r = HttpRequest(port_, "GET", "/api/v1/specs", "", {{"Authorization", "Bearer " + submitter_}});
      if (r.status == 200) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 32);
  close(idle);
  // Still serving, correctly.
  HttpResponse r = HttpRequest(port_, "GET", "/api/v1/runs", "", {{"Authorization", "Bearer " + submitter_}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(absl::StrContains(r.body, "\"runs\":[]")) << r.body;
  EXPECT_EQ(HttpRequest(port_, "GET", "/").status, 200);
  EXPECT_GT(coordinator_->pid(), 0);
  EXPECT_EQ(kill(coordinator_->pid(), 0), 0) << "the coordinator died:\n" << coordinator_->log();
}

TEST_F(HttpGatewayTest, BadOrTakenHttpAddressesFailTheStart) {
  // Taken: the address of the running gateway, given explicitly -> exit 1.
  std::string dir = dualswarm::testing::MakeTempDir("ds-http-gw-2");
  dualswarm::testing::CommandResult r =
      dualswarm::testing::RunCommand({DUALSWARM_COORDINATOR, "--listen", "127.0.0.1:0", "--data-dir", dir + "/data",
                                      "--metrics-listen", "", "--http-listen", absl::StrCat("127.0.0.1:", port_)});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "cannot serve HTTP on")) << r.err;
  // Malformed: exit 2 before any database starts.
  for (const char* bad : {"nonsense", "127.0.0.1:99999", "127.0.0.1:80,127.0.0.1:81", ":"}) {
    r = dualswarm::testing::RunCommand(
        {DUALSWARM_COORDINATOR, "--listen", "127.0.0.1:0", "--data-dir", dir + "/data2", "--http-listen", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "--http-listen")) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/data2/pg"));
  std::filesystem::remove_all(dir);
}

}  // namespace
