// The remote commands of the `dualswarm` CLI (spec, target, run, finding)
// against the real dualswarm-coordinator (embedded PostgreSQL in a temporary
// directory, one per test case): exit codes, error messages, flags and the
// DUALSWARM_ADDR / DUALSWARM_TOKEN environment, `run watch` following a run
// that the test completes through the WorkerService while the CLI watches
// (plain lines and the terminal progress line under a pseudo-terminal),
// findings drawn as sequence diagrams and saved for `dualswarm replay`
// (against ds-ref-webdav mutant 6), and TLS with --tls-ca.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "dualswarm/v1/finding.grpc.pb.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "engine/harness/counterexample.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/processes.h"

namespace {

namespace v1 = ::dualswarm::v1;
using dualswarm::testing::CommandResult;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::RunCommand;
using dualswarm::testing::Slurp;
using dualswarm::testing::WaitFor;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kSrc = DUALSWARM_SOURCE_DIR;
const std::string kCli = DUALSWARM_CLI;
const std::string kWebdav = DS_REF_WEBDAV;

// Waits up to `timeout` for `pid` to exit; returns its exit code, -1 when
// it was killed by a signal, -2 when it had to be killed after the timeout.
int WaitExit(pid_t pid, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -2;
}

// A command whose stdout and stderr are a pseudo-terminal (so isatty() holds
// in it); its output is collected while it runs.
class PtyProcess {
 public:
  ~PtyProcess() {
    if (pid_ > 0) WaitExit(pid_, milliseconds(1));
    if (reader_.joinable()) reader_.join();
    if (master_ >= 0) close(master_);
  }

  bool Start(const std::vector<std::string>& argv) {
    master_ = posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) return false;
    std::string slave = ptsname(master_);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, slave.c_str(), O_RDWR | O_NOCTTY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addclose(&fa, master_);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int rc = posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return false;
    reader_ = std::thread([this] {
      char buf[4096];
      for (;;) {
        ssize_t n = read(master_, buf, sizeof buf);
        if (n <= 0) break;  // EIO once the child closed the terminal
        std::lock_guard<std::mutex> lock(mu_);
        out_.append(buf, static_cast<size_t>(n));
      }
    });
    return true;
  }

  std::string output() {
    std::lock_guard<std::mutex> lock(mu_);
    return out_;
  }

  int Wait(milliseconds timeout) {
    int code = WaitExit(pid_, timeout);
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    return code;
  }

 private:
  int master_ = -1;
  pid_t pid_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::string out_;
};

class CliRemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = dualswarm::testing::MakeTempDir("ds-cli");
    ASSERT_FALSE(tmp_.empty());
    coordinator_ = std::make_unique<CoordinatorProcess>(
        CoordinatorProcess::Options{DUALSWARM_COORDINATOR, tmp_, "", {"--lease-ms", "30000"}, 0});
    ASSERT_EQ(coordinator_->Start(), "");
    admin_ = coordinator_->Token("admin");
    submitter_ = coordinator_->Token("submitter");
    worker_ = coordinator_->Token("worker");
    ASSERT_FALSE(admin_.empty() || submitter_.empty() || worker_.empty());
  }

  void TearDown() override {
    coordinator_.reset();
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
  }

  // The CLI with --coordinator and --token (none when `token` is empty) and
  // without DUALSWARM_ADDR/DUALSWARM_TOKEN from the environment.
  CommandResult Cli(std::vector<std::string> args, const std::string& token) {
    args.insert(args.begin(), kCli);
    args.insert(args.end(), {"--coordinator", coordinator_->address()});
    if (!token.empty()) args.insert(args.end(), {"--token", token});
    return RunCommand(args, {{"DUALSWARM_ADDR", ""}, {"DUALSWARM_TOKEN", ""}});
  }

  std::vector<std::string> WithConnection(std::vector<std::string> args, const std::string& token) {
    args.insert(args.begin(), kCli);
    args.insert(args.end(), {"--coordinator", coordinator_->address(), "--token", token});
    return args;
  }

  std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) { return dualswarm::testing::AuthContext(token); }

  // "target N 'NAME' added: ..." -> N
  int64_t AddTarget(const std::string& name, const std::string& adapter, const std::string& launch) {
    CommandResult r = Cli({"target", "add", name, "--adapter", adapter, "--launch", launch}, admin_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    int64_t id = 0;
    EXPECT_EQ(std::sscanf(r.out.c_str(), "target %ld", &id), 1) << r.out;
    return id;
  }

  // "run N submitted: ..." -> N
  static int64_t RunIdOf(const std::string& out) {
    int64_t id = 0;
    size_t at = out.find("run ");
    if (at == std::string::npos || std::sscanf(out.c_str() + at, "run %ld submitted", &id) != 1) return 0;
    return id;
  }

  std::string RegisterWorker() {
    auto workers = v1::WorkerService::NewStub(coordinator_->channel());
    v1::RegisterWorkerRequest req;
    req.set_name("cli-test-worker");
    req.set_slots(4);
    v1::RegisterWorkerResponse resp;
    grpc::Status st = workers->Register(Ctx(worker_).get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.worker_id();
  }

  std::vector<v1::LeasedJob> Lease(const std::string& worker_id, int max_jobs) {
    auto workers = v1::WorkerService::NewStub(coordinator_->channel());
    v1::LeaseJobsRequest req;
    req.set_worker_id(worker_id);
    req.set_max_jobs(max_jobs);
    req.set_wait_ms(5000);
    v1::LeaseJobsResponse resp;
    grpc::Status st = workers->LeaseJobs(Ctx(worker_).get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return {resp.jobs().begin(), resp.jobs().end()};
  }

  // Completes a leased job; with a counterexample it FAILED, else PASSED.
  void Complete(const std::string& worker_id, const v1::LeasedJob& job, const v1::Counterexample* cx,
                const std::vector<int32_t>& covered_branches = {}) {
    auto workers = v1::WorkerService::NewStub(coordinator_->channel());
    v1::CompleteJobRequest req;
    for (const int32_t id : covered_branches) req.add_covered_branches(id);
    req.set_worker_id(worker_id);
    req.set_job_id(job.job_id());
    req.set_lease_token(job.lease_token());
    req.set_outcome(cx ? v1::JOB_OUTCOME_FAILED : v1::JOB_OUTCOME_PASSED);
    if (cx) {
      *req.mutable_counterexample() = *cx;
      req.set_reason(cx->reason());
    }
    req.set_seconds(0.5);
    req.set_sent(10);
    req.set_received(10);
    v1::CompleteJobResponse resp;
    grpc::Status st = workers->CompleteJob(Ctx(worker_).get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
  }

  v1::Run GetRun(int64_t id) {
    auto runs = v1::RunService::NewStub(coordinator_->channel());
    v1::GetRunRequest req;
    req.set_id(id);
    v1::Run run;
    EXPECT_TRUE(runs->Get(Ctx(submitter_).get(), req, &run).ok());
    return run;
  }

  std::string tmp_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::string admin_, submitter_, worker_;
};

std::string HeadLine(const std::string& s) { return s.substr(0, s.find('\n')); }

TEST_F(CliRemoteTest, SpecPushListAndShow) {
  std::string kv_file = kSrc + "/specs/kv.dspec";
  CommandResult r = Cli({"spec", "push", kv_file}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string hash = HeadLine(r.out);
  EXPECT_EQ(hash.size(), 64u) << r.out;
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "spec kv, new version stored")) << r.out;

  r = Cli({"spec", "push", kv_file}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(HeadLine(r.out), hash) << "content-addressed";
  EXPECT_TRUE(absl::StrContains(r.out, "already stored")) << r.out;

  // A spec that does not load: every error with file:line:column, exit 2.
  std::string bad = tmp_ + "/bad.dspec";
  {
    FILE* f = std::fopen(bad.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("spec bad\nvar x: int = ;\non recv R from C {\n  send nothing_defined;\n}\n", f);
    std::fclose(f);
  }
  r = Cli({"spec", "push", bad}, submitter_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "INVALID_ARGUMENT")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, bad + ":2:1: ")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, bad + ":2:14: ")) << r.err;
  EXPECT_EQ(r.out, "");

  // --name guards against pushing the wrong file.
  r = Cli({"spec", "push", kv_file, "--name", "webdav"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "declares spec 'kv', not 'webdav'")) << r.err;
  r = Cli({"spec", "push", "--name", "kv", kv_file}, submitter_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"spec", "push", tmp_ + "/missing.dspec"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "missing.dspec")) << r.err;

  r = Cli({"spec", "push", kSrc + "/specs/http_webdav.dspec"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string webdav_hash = HeadLine(r.out);

  r = Cli({"spec", "list"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "HASH ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, hash + "  kv ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, webdav_hash + "  http_webdav ")) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
  r = Cli({"spec", "list", "--name", "kv"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, hash)) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, webdav_hash)) << r.out;
  r = Cli({"spec", "list", "--name", "nothing"}, submitter_);
  EXPECT_EQ(r.out, "no specs named 'nothing'\n");
  r = Cli({"spec", "list", "--json", "--limit", "1"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "{\"specs\":[{\"hash\":\"")) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line";

  r = Cli({"spec", "show", hash}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "spec kv\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "hash          " + hash)) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "choice sites  ")) << r.out;
  r = Cli({"spec", "show", "--name", "kv", "--source"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, Slurp(kv_file)) << "--source prints the source as stored";
  r = Cli({"spec", "show", std::string(64, 'f')}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StartsWith(r.err, "dualswarm: coordinator " + coordinator_->address() + ": NOT_FOUND: ")) << r.err;
  r = Cli({"spec", "show"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "exactly one of HASH or --name")) << r.err;

  // Help and usage errors need no coordinator.
  r = RunCommand({kCli, "spec", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.out, "usage: dualswarm spec push FILE")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "DUALSWARM_ADDR")) << r.out;
  r = RunCommand({kCli, "spec", "frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  r = RunCommand({kCli, "spec", "list", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "unknown option '--bogus'")) << r.err;
}

TEST_F(CliRemoteTest, TargetsAuthAndTheEnvironment) {
  const std::string addr = coordinator_->address();
  CommandResult r =
      Cli({"target", "add", "kv-ref", "--adapter", "jsonl", "--launch", "/bin/kv --port {port}", "--ready", "tcp",
           "--ready-timeout-ms", "2500", "--label", "os=linux", "--label", "zone=a,disk=ssd"},
          admin_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out,
                               "target 1 'kv-ref' added: jsonl launch `/bin/kv --port {port}`, ready tcp "
                               "(2500 ms), reset restart-per-job, labels os=linux,zone=a,disk=ssd"))
      << r.out;
  r = Cli({"target", "add", "webdav", "--adapter", "http", "--address", "127.0.0.1:8080", "--ready", "http:/",
           "--reset", "none", "--json"},
          admin_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "\"resetPolicy\":\"RESET_POLICY_NONE\"")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\"probe\":\"http:/\"")) << r.out;

  r = Cli({"target", "list"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(absl::StripTrailingAsciiWhitespace(r.out), '\n');
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[0], "ID  NAME    ADAPTER  RESET")) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[1], "1   kv-ref  jsonl    restart-per-job  os=linux,zone=a,disk=ssd")) << r.out;
  EXPECT_TRUE(absl::StrContains(lines[2], "127.0.0.1:8080")) << r.out;

  // Only admins add targets: PERMISSION_DENIED is exit 4 with a one-line message.
  r = Cli({"target", "add", "kv2", "--adapter", "jsonl", "--launch", "/bin/kv --port {port}"}, submitter_);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err,
            "dualswarm: coordinator " + addr + ": PERMISSION_DENIED: role \"submitter\" may not call this method\n");
  EXPECT_EQ(r.out, "");
  r = Cli({"target", "list"}, worker_);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_TRUE(absl::StrContains(r.err, "PERMISSION_DENIED: role \"worker\" may not call this method")) << r.err;

  // No token, or an unknown one: UNAUTHENTICATED, exit 4.
  r = Cli({"target", "list"}, "");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_TRUE(absl::StartsWith(r.err, "dualswarm: coordinator " + addr + ": UNAUTHENTICATED: ")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "DUALSWARM_TOKEN")) << r.err;
  r = Cli({"target", "list"}, "dst_0000");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_TRUE(absl::StrContains(r.err, "UNAUTHENTICATED")) << r.err;

  // Refused requests are exit 2.
  r = Cli({"target", "add", "kv-ref", "--adapter", "jsonl", "--launch", "/bin/kv --port {port}"}, admin_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "ALREADY_EXISTS: a target named \"kv-ref\" exists")) << r.err;
  r = Cli({"target", "add", "kv3", "--adapter", "jsonl", "--launch", "/bin/kv"}, admin_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "INVALID_ARGUMENT: the launch command must contain {port}")) << r.err;
  r = Cli({"target", "add", "kv3", "--adapter", "jsonl"}, admin_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "exactly one of --launch CMD or --address HOST:PORT")) << r.err;
  r = Cli({"target", "add", "kv3", "--adapter", "jsonl", "--address", "h:1", "--reset", "sometimes"}, admin_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--reset must be one of restart-per-job|none")) << r.err;
  // Every adapter of workers/adapters/adapter_kinds.h is a target's; the
  // coordinator refuses another and names the list.
  r = Cli({"target", "add", "redis", "--adapter", "resp", "--address", "127.0.0.1:6379"}, admin_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "added: resp 127.0.0.1:6379")) << r.out;
  r = Cli({"target", "add", "kv5", "--adapter", "smtp", "--address", "h:1"}, admin_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(
      r.err, "INVALID_ARGUMENT: unknown adapter \"smtp\" (known: http, jsonl, resp, memcached, grpc, fs)"))
      << r.err;
  // A grpc target needs its descriptor set (tests/integration/grpc_target_test.cc).
  r = Cli({"target", "add", "kv6", "--adapter", "grpc", "--address", "h:1"}, admin_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "the grpc adapter needs --descriptor-set FILE")) << r.err;
  // An fs target's program may run as another user; only an fs target's.
  r = Cli({"target", "add", "sync", "--adapter", "fs", "--launch", "unison {a} {b}", "--run-as", "nobody"}, admin_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "added: fs (as nobody) launch `unison {a} {b}`")) << r.out;
  r = Cli({"target", "add", "kv7", "--adapter", "jsonl", "--address", "h:1", "--run-as", "nobody"}, admin_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--run-as is for the fs adapter only")) << r.err;
  // A launched server may be reset between shrinking reruns instead of relaunched.
  r = Cli({"target", "add", "dav", "--adapter", "http", "--launch", "/bin/dav --port {port} --dir {dir}",
           "--reset-command", "find {dir}/root -mindepth 1 -delete"},
          admin_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "reset restart-per-job (reruns reset by `find {dir}/root -mindepth 1 -delete`)"))
      << r.out;
  r = Cli({"target", "add", "dav2", "--adapter", "http", "--address", "h:1", "--reset-command", "true"}, admin_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "a reset command is for targets the worker launches")) << r.err;

  // DUALSWARM_ADDR and DUALSWARM_TOKEN stand in for the flags...
  r = RunCommand({kCli, "target", "list"}, {{"DUALSWARM_ADDR", addr}, {"DUALSWARM_TOKEN", submitter_}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "kv-ref")) << r.out;
  r = RunCommand({kCli, "target", "add", "kv4", "--adapter", "jsonl", "--launch", "/bin/kv --port {port}"},
                 {{"DUALSWARM_ADDR", addr}, {"DUALSWARM_TOKEN", submitter_}});
  EXPECT_EQ(r.exit_code, 4) << "the token from the environment is the submitter's";
  // ... and the flags win over them.
  r = RunCommand({kCli, "target", "list", "--coordinator", addr, "--token", submitter_},
                 {{"DUALSWARM_ADDR", "127.0.0.1:1"}, {"DUALSWARM_TOKEN", "dst_wrong"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // A coordinator that is not there: UNAVAILABLE, exit 4, the address named.
  r = RunCommand({kCli, "target", "list"}, {{"DUALSWARM_ADDR", "127.0.0.1:1"}, {"DUALSWARM_TOKEN", submitter_}});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_TRUE(absl::StartsWith(r.err, "dualswarm: coordinator 127.0.0.1:1: UNAVAILABLE: ")) << r.err;
  // Without either, the default address (whatever listens there refuses a bogus token).
  r = RunCommand({kCli, "target", "list"}, {{"DUALSWARM_ADDR", ""}, {"DUALSWARM_TOKEN", "dst_bogus"}});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_TRUE(absl::StartsWith(r.err, "dualswarm: coordinator 127.0.0.1:7420: ")) << r.err;
}

TEST_F(CliRemoteTest, RunSubmitListShowCancelAndWatchOfACancelledRun) {
  int64_t target = AddTarget("kv-ref", "jsonl", "/bin/kv --port {port}");
  ASSERT_EQ(target, 1);
  std::string kv_file = kSrc + "/specs/kv.dspec";

  // --spec-file pushes the spec first.
  CommandResult r = Cli({"run",
                         "submit",
                         "--spec-file",
                         kv_file,
                         "--target",
                         "kv-ref",
                         "--jobs",
                         "3",
                         "--seed",
                         "7",
                         "--steps",
                         "50",
                         "--connections",
                         "2",
                         "--max-in-flight",
                         "3",
                         "--response-timeout-ms",
                         "700",
                         "--time-budget-ms",
                         "9000",
                         "--network",
                         "sync",
                         "--stop-at-first-finding"},
                        submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "pushed " + kv_file + ": spec kv ")) << r.err;
  int64_t run1 = RunIdOf(r.out);
  ASSERT_GT(run1, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "follow it: dualswarm run watch " + absl::StrCat(run1))) << r.out;
  v1::Run got = GetRun(run1);
  EXPECT_EQ(got.template_().jobs(), 3);
  EXPECT_EQ(got.template_().seed(), 7u);
  EXPECT_EQ(got.template_().target_id(), target);
  EXPECT_TRUE(got.template_().stop_at_first_finding());
  EXPECT_EQ(got.template_().budget().steps(), 50u);
  EXPECT_EQ(got.template_().budget().connections(), 2);
  EXPECT_EQ(got.template_().budget().max_in_flight(), 3);
  EXPECT_EQ(got.template_().budget().response_timeout_ms(), 700);
  EXPECT_EQ(got.template_().budget().time_budget_ms(), 9000);
  EXPECT_EQ(got.template_().budget().network(), "sync");
  std::string hash = got.template_().spec_hash();

  EXPECT_EQ(got.template_().budget().guide_candidates(), 0) << "random generation unless asked";

  // --spec HASH with a target id, coverage-guided; --spec-name NAME; --json.
  r = Cli({"run", "submit", "--spec", hash, "--target", "1", "--jobs", "2", "--coverage-guided"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t run2 = RunIdOf(r.out);
  ASSERT_EQ(run2, run1 + 1) << r.out;
  EXPECT_EQ(GetRun(run2).template_().budget().guide_candidates(), 8);
  r = Cli({"run", "show", absl::StrCat(run2)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "coverage-guided (8 candidates)")) << r.out;
  r = Cli({"run", "submit", "--spec", hash, "--target", "1", "--jobs", "1", "--guide-candidates", "65"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--guide-candidates must be an integer between 2 and 64")) << r.err;
  r = Cli({"run", "submit", "--spec-name", "kv", "--target", "kv-ref", "--jobs", "1", "--json"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, absl::StrCat("{\"id\":\"", run2 + 1, "\",\"template\":{\"specHash\":\"", hash)))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\"state\":\"RUN_STATE_QUEUED\"")) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, "startedAt")) << "unset timestamps stay unset: " << r.out;

  // Refused submissions.
  r = Cli({"run", "submit", "--spec-name", "kv", "--target", "nope", "--jobs", "1"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND: no target named \"nope\"")) << r.err;
  r = Cli({"run", "submit", "--spec", std::string(64, 'a'), "--target", "1", "--jobs", "1"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND")) << r.err;
  r = Cli({"run", "submit", "--spec", hash, "--target", "1", "--jobs", "0"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--jobs must be an integer between 1 and 100000")) << r.err;
  r = Cli({"run", "submit", "--spec", hash, "--spec-name", "kv", "--target", "1", "--jobs", "1"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  r = Cli({"run", "submit", "--spec", hash, "--target", "1", "--jobs", "1"}, worker_);
  EXPECT_EQ(r.exit_code, 4);

  // list, with filters.
  r = Cli({"run", "list"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(absl::StripTrailingAsciiWhitespace(r.out), '\n');
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[0], "ID  STATE   DONE  FAILED  ERROR  SPEC")) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[1], absl::StrCat(run2 + 1, "   queued  0/1 "))) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[3], absl::StrCat(run1, "   queued  0/3 "))) << r.out;
  EXPECT_TRUE(absl::StrContains(lines[3], hash.substr(0, 12) + "  1       submitter-test")) << r.out;
  r = Cli({"run", "list", "--limit", "2"}, submitter_);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;

  // show, cancel, and watch of the cancelled run: exit 3.
  r = Cli({"run", "show", absl::StrCat(run1)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, absl::StrCat("run ", run1, ": queued\n"))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "0/3 done: queued 3, leased 0, passed 0, failed 0, error 0, cancelled 0"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "seed          7, stops at the first finding")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out,
                                "50 steps, 2 connections, 3 in flight, response timeout 700 ms, time budget "
                                "9000 ms, network sync"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "started       -")) << r.out;
  r = Cli({"run", "cancel", absl::StrCat(run1)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, absl::StrCat("run ", run1, ": cancelled (0 of 3 jobs had finished, 3 cancelled)\n"));
  EXPECT_EQ(GetRun(run1).state(), v1::RUN_STATE_CANCELLED);
  r = Cli({"run", "list", "--state", "cancelled"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("\n", run1, "   cancelled  3/3 "))) << r.out;
  r = Cli({"run", "list", "--state", "sleeping"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "queued|running|passed|failed|cancelled|error")) << r.err;

  auto t0 = std::chrono::steady_clock::now();
  r = Cli({"run", "watch", absl::StrCat(run1)}, submitter_);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, seconds(10));
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("run ", run1,
                                                    " cancelled: 3/3 jobs done (queued 0, leased 0, "
                                                    "passed 0, failed 0, error 0, cancelled 3)")))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("run ", run1, " cancelled: 0 of 3 jobs had finished"))) << r.out;
  r = Cli({"run", "watch", absl::StrCat(run1), "--json"}, submitter_);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(absl::StartsWith(r.out, "{\"run\":{\"id\":\"")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\"final\":true}\n")) << r.out;

  r = Cli({"run", "show", "999"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND: no run 999")) << r.err;

  // An explore run: no target, its depth and state bound.
  r = Cli({"run", "submit", "--spec", hash, "--explore-depth", "4", "--explore-max-states", "500", "--jobs", "2"},
          submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t explore_run = RunIdOf(r.out);
  v1::Run explored = GetRun(explore_run);
  EXPECT_EQ(explored.template_().budget().explore_depth(), 4);
  EXPECT_EQ(explored.template_().budget().explore_max_states(), 500u);
  EXPECT_NE(explored.template_().target_id(), target);
  r = Cli({"run", "show", absl::StrCat(explore_run)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "explores the spec to depth 4, at most 500 states, time budget 60000 ms"))
      << r.out;
  r = Cli({"run", "submit", "--spec", hash, "--explore-depth", "4", "--target", "1", "--jobs", "1"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "drop --target")) << r.err;
  r = Cli({"run", "submit", "--spec", hash, "--explore-depth", "65", "--jobs", "1"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--explore-depth must be an integer between 1 and 64")) << r.err;
  r = Cli({"run", "watch", "999"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND")) << r.err;
  r = Cli({"run", "show", "abc"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  r = RunCommand({kCli, "run", "watch", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.out, "3 when it was cancelled")) << r.out;
}

TEST_F(CliRemoteTest, RunWatchFollowsARunUntilItFailsOrPasses) {
  AddTarget("kv-ref", "jsonl", "/bin/kv --port {port}");
  std::string worker = RegisterWorker();
  ASSERT_FALSE(worker.empty());
  CommandResult r =
      Cli({"run", "submit", "--spec-file", kSrc + "/specs/kv.dspec", "--target", "kv-ref", "--jobs", "2"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t run = RunIdOf(r.out);
  ASSERT_GT(run, 0);

  // One job leased: the run is running when the watch starts.
  std::vector<v1::LeasedJob> jobs = Lease(worker, 1);
  ASSERT_EQ(jobs.size(), 1u);
  std::string log = tmp_ + "/watch.log";
  pid_t pid = dualswarm::testing::Spawn(WithConnection({"run", "watch", absl::StrCat(run)}, submitter_), log);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(Slurp(log), "running: 0/2 jobs done"); }, seconds(30)))
      << Slurp(log);
  Complete(worker, jobs[0], nullptr);
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(Slurp(log), "running: 1/2 jobs done"); }, seconds(30)))
      << Slurp(log);
  jobs = Lease(worker, 1);
  ASSERT_EQ(jobs.size(), 1u);
  v1::Counterexample cx;
  cx.set_kind(v1::VERDICT_KIND_SAFETY);
  cx.set_reason("stale read");
  cx.set_signature("0123456789abcdef");
  cx.set_size(2);
  Complete(worker, jobs[0], &cx);
  EXPECT_EQ(WaitExit(pid, seconds(30)), 1) << "a failed run: exit 1\n" << Slurp(log);
  std::string out = Slurp(log);
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("run ", run,
                                                  " running: 0/2 jobs done (queued 1, leased 1, "
                                                  "passed 0, failed 0, error 0, cancelled 0)")))
      << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("run ", run,
                                                  " failed: 2/2 jobs done (queued 0, leased 0, "
                                                  "passed 1, failed 1, error 0, cancelled 0)")))
      << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("run ", run, " failed: 1 of 2 jobs found a bug"))) << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("dualswarm finding list --run ", run))) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << "no progress bar when stdout is not a terminal";

  // submit --watch: follows the run it submitted; a passed run exits 0.
  std::string log2 = tmp_ + "/submit-watch.log";
  pid = dualswarm::testing::Spawn(
      WithConnection({"run", "submit", "--spec-name", "kv", "--target", "kv-ref", "--jobs", "1", "--watch"},
                     submitter_),
      log2);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(Slurp(log2), "queued: 0/1 jobs done"); }, seconds(30)))
      << Slurp(log2);
  int64_t run2 = RunIdOf(Slurp(log2));
  EXPECT_EQ(run2, run + 1);
  jobs = Lease(worker, 1);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].run_id(), run2);
  Complete(worker, jobs[0], nullptr);
  EXPECT_EQ(WaitExit(pid, seconds(30)), 0) << Slurp(log2);
  EXPECT_TRUE(absl::StrContains(Slurp(log2), absl::StrCat("run ", run2, " passed: 1 jobs, no findings")))
      << Slurp(log2);

  // On a terminal: one progress line redrawn with \r, then the summary.
  r = Cli({"run", "submit", "--spec-name", "kv", "--target", "kv-ref", "--jobs", "3"}, submitter_);
  int64_t run3 = RunIdOf(r.out);
  ASSERT_GT(run3, 0) << r.out << r.err;
  PtyProcess tty;
  ASSERT_TRUE(tty.Start(WithConnection({"run", "watch", absl::StrCat(run3)}, submitter_)));
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(tty.output(), "0/3"); }, seconds(30))) << tty.output();
  jobs = Lease(worker, 3);
  ASSERT_EQ(jobs.size(), 3u);
  for (const auto& j : jobs) Complete(worker, j, nullptr);
  EXPECT_EQ(tty.Wait(seconds(30)), 0) << tty.output();
  std::string screen = tty.output();
  EXPECT_TRUE(absl::StrContains(screen, absl::StrCat("\r\033[Krun ", run3,
                                                     " [........................] 0/3  queued 3  "
                                                     "leased 0  passed 0  failed 0  error 0  ")))
      << screen;
  EXPECT_TRUE(absl::StrContains(screen, absl::StrCat("\r\033[Krun ", run3,
                                                     " [########################] 3/3  queued 0  "
                                                     "leased 0  passed 3  failed 0  error 0  ")))
      << screen;
  EXPECT_TRUE(absl::StrContains(screen, absl::StrCat("run ", run3, " passed: 3 jobs, no findings"))) << screen;
  EXPECT_EQ(std::count(screen.begin(), screen.end(), '\n'), 2)
      << "the progress line is redrawn, not repeated: " << screen;
}

// `run coverage`: the union of the branches the run's jobs reported, over
// the spec's branches (docs/coverage.md).
TEST_F(CliRemoteTest, RunCoverageUnitesTheJobsReportsOverTheSpecsBranches) {
  CommandResult r = Cli({"spec", "push", kSrc + "/specs/queue.dspec"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string hash = HeadLine(r.out);
  AddTarget("queue", "jsonl", kWebdav + " --port {port} --dir {dir}");
  r = Cli({"run", "submit", "--spec", hash, "--target", "queue", "--jobs", "2"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t run = RunIdOf(r.out);
  ASSERT_GT(run, 0);
  auto spec = dualswarm::lang::LoadSpecFile(kSrc + "/specs/queue.dspec");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const int total = static_cast<int>((*spec)->branches.size());
  ASSERT_GE(total, 4);

  r = Cli({"run", "coverage", absl::StrCat(run)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(
      r.out, absl::StrCat("run ", run, ": 0 of ", total, " spec branches covered (0 %) by 0 completed jobs\n")))
      << r.out;

  const std::string worker = RegisterWorker();
  std::vector<v1::LeasedJob> jobs = Lease(worker, 2);
  ASSERT_EQ(jobs.size(), 2u);
  Complete(worker, jobs[0], nullptr, {0, 1});
  Complete(worker, jobs[1], nullptr, {1, 3});
  r = Cli({"run", "coverage", absl::StrCat(run)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(absl::StripTrailingAsciiWhitespace(r.out), '\n');
  ASSERT_GE(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0], absl::StrCat("run ", run, ": 3 of ", total, " spec branches covered (", 300 / total,
                                   " %) by 2 completed jobs"));
  EXPECT_EQ(lines[1], "never taken:");
  const dualswarm::lang::Branch& b2 = (*spec)->branches[2];
  EXPECT_EQ(lines[2],
            absl::StrCat("  ", b2.loc.line, ":", b2.loc.col, "  ", b2.scope, ": ", dualswarm::lang::BranchLabel(b2)));
  EXPECT_EQ(lines.size(), 2u + static_cast<size_t>(total - 3)) << r.out;
  r = Cli({"run", "coverage", absl::StrCat(run), "--json"}, submitter_);
  EXPECT_TRUE(absl::StrContains(r.out, "\"covered\":3")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("\"specHash\":\"", hash, "\""))) << r.out;
  r = Cli({"run", "coverage", "999"}, submitter_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "no run 999")) << r.err;
}

// A coverage-guided run's later leases carry what its completed jobs
// covered (LeasedJob.run_covered_branches), so each job's guide seeks the
// rest; a run that is not guided gets nothing.
TEST_F(CliRemoteTest, AGuidedRunsLeasesCarryWhatItsJobsCovered) {
  CommandResult r = Cli({"spec", "push", kSrc + "/specs/queue.dspec"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string hash = HeadLine(r.out);
  AddTarget("queue", "jsonl", kWebdav + " --port {port} --dir {dir}");
  r = Cli({"run", "submit", "--spec", hash, "--target", "queue", "--jobs", "3", "--coverage-guided"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string worker = RegisterWorker();
  std::vector<v1::LeasedJob> first = Lease(worker, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].run_covered_branches_size(), 0);
  Complete(worker, first[0], nullptr, {0, 2});
  std::vector<v1::LeasedJob> second = Lease(worker, 1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(std::vector<int32_t>(second[0].run_covered_branches().begin(), second[0].run_covered_branches().end()),
            (std::vector<int32_t>{0, 2}));
  Complete(worker, second[0], nullptr, {1});
  std::vector<v1::LeasedJob> third = Lease(worker, 1);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(std::vector<int32_t>(third[0].run_covered_branches().begin(), third[0].run_covered_branches().end()),
            (std::vector<int32_t>{0, 1, 2}));
  Complete(worker, third[0], nullptr, {});

  r = Cli({"run", "submit", "--spec", hash, "--target", "queue", "--jobs", "2"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<v1::LeasedJob> plain = Lease(worker, 1);
  ASSERT_EQ(plain.size(), 1u);
  Complete(worker, plain[0], nullptr, {0, 1, 3});
  plain = Lease(worker, 1);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].run_covered_branches_size(), 0);
}

TEST_F(CliRemoteTest, FindingListShowDrawsTheCounterexampleAndSaveReplays) {
  // A real counterexample document, from the online tester against mutant 6.
  std::string launch = kWebdav + " --port {port} --dir {dir} --mutant 6";
  std::string produced = tmp_ + "/produced.json";
  CommandResult r = RunCommand({kCli, "test", "--spec", kSrc + "/specs/http_webdav.dspec", "--launch", launch,
                                "--steps", "2000", "--save", produced, "--quiet"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  std::string doc(absl::StripTrailingAsciiWhitespace(Slurp(produced)));
  auto parsed = dualswarm::harness::CounterexampleFromJson(doc);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->verdict.kind, "safety");

  r = Cli({"spec", "push", kSrc + "/specs/http_webdav.dspec"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string hash = HeadLine(r.out);
  int64_t target = AddTarget("webdav-m6", "http", launch);
  r = Cli({"run", "submit", "--spec", hash, "--target", "webdav-m6", "--jobs", "2"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t run = RunIdOf(r.out);
  ASSERT_GT(run, 0);

  // The worker's report, as the worker daemon would send it.
  std::string worker = RegisterWorker();
  std::vector<v1::LeasedJob> jobs = Lease(worker, 2);
  ASSERT_EQ(jobs.size(), 2u);
  v1::Counterexample cx;
  cx.set_kind(v1::VERDICT_KIND_SAFETY);
  cx.set_reason(parsed->verdict.reason);
  cx.set_diff(parsed->verdict.field);
  cx.set_signature(parsed->signature);
  cx.set_input_json("[]");
  cx.set_size(static_cast<int32_t>(parsed->shrunk_size));
  cx.set_unshrunk_size(static_cast<int32_t>(parsed->original_size));
  cx.set_document_json(doc);
  Complete(worker, jobs[0], &cx);
  // An older worker's report: no document.
  v1::Counterexample old;
  old.set_kind(v1::VERDICT_KIND_LIVENESS);
  old.set_reason("no response to request 3 within 5000 ms\nsecond line");
  old.set_signature("00000000deadbeef");
  old.set_input_json("[{\"conn\":0,\"jexpr\":{\"method\":\"GET\",\"path\":\"/a\"}}]");
  old.set_trace_json("{\"label\":1,\"conn\":0,\"dir\":\"sent\"}\n");
  old.set_size(1);
  Complete(worker, jobs[1], &old);

  r = Cli({"finding", "list", "--run", absl::StrCat(run)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(absl::StripTrailingAsciiWhitespace(r.out), '\n');
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[0], "ID  KIND      COUNT  SIGNATURE         REASON")) << r.out;
  int64_t safety_id = 0, liveness_id = 0;
  for (const auto& l : lines) {
    int64_t id = 0;
    if (std::sscanf(l.c_str(), "%ld", &id) != 1) continue;
    if (absl::StrContains(l, "safety")) {
      safety_id = id;
      EXPECT_TRUE(
          absl::StrContains(l, "  safety    1      " + parsed->signature + "  " + parsed->verdict.reason.substr(0, 60)))
          << l;
    } else {
      liveness_id = id;
      EXPECT_TRUE(absl::EndsWith(l, "liveness  1      00000000deadbeef  no response to request 3 within 5000 ms"))
          << "the reason's first line: " << l;
    }
  }
  ASSERT_GT(safety_id, 0) << r.out;
  ASSERT_GT(liveness_id, 0) << r.out;
  r = Cli({"finding", "list", "--target", "webdav-m6", "--spec", hash}, submitter_);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out << r.err;
  r = Cli({"finding", "list", "--target", absl::StrCat(target + 1)}, submitter_);
  EXPECT_EQ(r.out, "no findings\n") << r.err;
  r = Cli({"finding", "list", "--run", absl::StrCat(run), "--json"}, submitter_);
  EXPECT_TRUE(absl::StartsWith(r.out, "{\"findings\":[{\"id\":")) << r.out;

  // show: the finding and the sequence diagram of its smallest counterexample.
  r = Cli({"finding", "show", absl::StrCat(safety_id)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, absl::StrCat("finding ", safety_id, ": safety, 1 counterexample (first seen ")))
      << r.out;
  EXPECT_TRUE(absl::StrContains(
      r.out, "  signature  " + parsed->signature + "\n  spec       " + hash + "\n  target     " + absl::StrCat(target)))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("smallest counterexample 1: run ", run, ", job ", jobs[0].job_id(),
                                                    ", seed ", jobs[0].seed())))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, dualswarm::harness::RenderSequenceDiagram(*parsed))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "<== REJECTED")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, " conn 0")) << r.out;

  // --save writes the document; `dualswarm replay` reproduces it.
  std::string saved = tmp_ + "/saved.json";
  r = Cli({"finding", "show", absl::StrCat(safety_id), "--save", saved}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "saved to " + saved)) << r.out;
  EXPECT_EQ(Slurp(saved), doc + "\n");
  r = RunCommand({kCli, "replay", saved, "--launch", launch, "--times", "2"});
  EXPECT_EQ(r.exit_code, 1) << "still broken: " << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "2 of 2 replays reproduced signature " + parsed->signature)) << r.out;

  r = Cli({"finding", "show", absl::StrCat(safety_id), "--json"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "\"documentJson\":\"{\\\"version\\\":1,")) << r.out.substr(0, 2000);

  // A counterexample without a document: its fields, and nothing to save.
  r = Cli({"finding", "show", absl::StrCat(liveness_id)}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "no document was kept")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "  kind       liveness\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "  input      [{\"conn\":0,")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "{\"label\":1,\"conn\":0,\"dir\":\"sent\"}\n")) << r.out;
  r = Cli({"finding", "show", absl::StrCat(liveness_id), "--save", tmp_ + "/nothing.json"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "has no document")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp_ + "/nothing.json"));

  r = Cli({"finding", "show", "12345"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND")) << r.err;
  r = Cli({"finding", "show", absl::StrCat(safety_id)}, "");
  EXPECT_EQ(r.exit_code, 4);
}

TEST_F(CliRemoteTest, TlsWithARootCa) {
  // A self-signed certificate for 127.0.0.1, and a second coordinator serving TLS with it.
  std::string cert = tmp_ + "/cert.pem", key = tmp_ + "/key.pem";
  CommandResult r =
      RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                  "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string tls_dir = dualswarm::testing::MakeTempDir("ds-cli-tls");
  ASSERT_FALSE(tls_dir.empty());
  {
    CoordinatorProcess tls(
        CoordinatorProcess::Options{DUALSWARM_COORDINATOR, tls_dir, "", {"--tls-cert", cert, "--tls-key", key}, 0});
    ASSERT_EQ(tls.Start(), "");
    std::string token = tls.Token("submitter");
    ASSERT_FALSE(token.empty());
    std::map<std::string, std::string> env = {{"DUALSWARM_ADDR", tls.address()}, {"DUALSWARM_TOKEN", token}};
    r = RunCommand({kCli, "spec", "push", kSrc + "/specs/kv.dspec", "--tls-ca", cert}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    r = RunCommand({kCli, "spec", "list", "--tls-ca", cert}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(absl::StrContains(r.out, "  kv  ")) << r.out;
    // Plaintext against a TLS server, or a CA that does not sign its certificate: UNAVAILABLE.
    r = RunCommand({kCli, "spec", "list"}, env);
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_TRUE(absl::StrContains(r.err, "UNAVAILABLE")) << r.err;
    std::string other = tmp_ + "/other.pem";
    ASSERT_EQ(RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                          tmp_ + "/other.key", "-out", other, "-days", "2", "-subj", "/CN=other"})
                  .exit_code,
              0);
    r = RunCommand({kCli, "spec", "list", "--tls-ca", other}, env);
    EXPECT_EQ(r.exit_code, 4) << r.out;
    r = RunCommand({kCli, "spec", "list", "--tls-ca", tmp_ + "/missing.pem"}, env);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(absl::StrContains(r.err, "--tls-ca: ")) << r.err;
  }
  std::error_code ec;
  std::filesystem::remove_all(tls_dir, ec);
}

// The daemons answer -h/--help like the CLI: usage and their own flags on
// stdout, exit 0 (Debian's abseil alone printed it to stderr with exit 1).
TEST(DaemonHelp, CoordinatorAndWorkerPrintUsageOnStdoutAndExitZero) {
  struct Case {
    std::string binary, first_line, a_flag;
  };
  for (const Case& c : {Case{DUALSWARM_COORDINATOR, "dualswarm-coordinator: the Dualswarm coordinator.", "--db_pool"},
                        Case{DUALSWARM_WORKER, "dualswarm-worker: runs Dualswarm jobs", "--slots"}}) {
    for (const char* flag : {"--help", "-h"}) {
      CommandResult r = RunCommand({c.binary, flag});
      EXPECT_EQ(r.exit_code, 0) << c.binary << " " << flag << ": " << r.err;
      EXPECT_TRUE(absl::StartsWith(r.out, c.first_line)) << r.out;
      EXPECT_TRUE(absl::StrContains(r.out, c.a_flag)) << r.out;
      EXPECT_EQ(r.err, "");
    }
  }
  // --helpfull lists every flag, abseil's own too (the deploy test reads it).
  CommandResult full = RunCommand({DUALSWARM_WORKER, "--helpfull"});
  EXPECT_EQ(full.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(full.out, "--tryfromenv")) << full.out;
  EXPECT_TRUE(absl::StrContains(full.out, "--slots")) << full.out;
  // A flag that does not exist is still an error.
  CommandResult r = RunCommand({DUALSWARM_WORKER, "--no-such-flag"});
  EXPECT_NE(r.exit_code, 0);
}

}  // namespace
