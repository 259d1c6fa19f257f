// The launcher's readiness probes (workers/sut/launcher.h) against real
// processes: "http:/PATH" waits for an HTTP answer (any 2xx/3xx/4xx status
// line), not merely for the port to accept — a server that accepts TCP but
// does not speak HTTP is never ready — and a bad probe is refused. Before,
// "http:/PATH" was accepted and ignored (only TCP was checked). One probe
// is bounded by its timeout as a whole, even against a server that trickles.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/lang/spec.h"
#include "util/ready_probe.h"
#include "workers/runner/runner.h"
#include "workers/sut/launcher.h"
#include "workers/sut/port_lease.h"

namespace dualswarm::workers {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

LaunchOptions Options(const std::string& command, const std::string& probe, int timeout_ms) {
  LaunchOptions o;
  o.command = command;
  o.ready_probe = probe;
  o.ready_timeout_ms = timeout_ms;
  return o;
}

TEST(ReadyProbeTest, HttpProbeWaitsForAnHttpAnswer) {
  // ds-ref-webdav answers GET /no-such-file with 404: ready.
  auto sut = SutProcess::Launch(
      Options(absl::StrCat(DS_REF_WEBDAV, " --port {port} --dir {dir}"), "http:/no-such-file", 10000));
  ASSERT_TRUE(sut.ok()) << sut.status();
  std::string answer;
  EXPECT_TRUE(AnswersHttp((*sut)->port(), "/", 2000, &answer)) << answer;
  EXPECT_TRUE(absl::StartsWith(answer, "\"HTTP/1.1 ")) << answer;
}

// A server on 127.0.0.1 (a thread) that accepts one connection and sends
// one byte ("H", never a newline) every 200 ms for at most 5 s.
class TricklingServer {
 public:
  TricklingServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listen_fd_, 4) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      return;
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TricklingServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(listen_fd_);
  }
  int port() const { return port_; }

 private:
  void Serve() {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    auto until = Clock::now() + std::chrono::seconds(5);
    while (!stop_ && Clock::now() < until && ::send(fd, "H", 1, MSG_NOSIGNAL) == 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::close(fd);
  }
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Before, the timeout bounded each recv, not the read: a byte every 200 ms
// kept the probe reading until 1024 bytes (~200 s; here until the server
// gives up after 5 s).
TEST(ReadyProbeTest, HttpProbeOfATricklingServerEndsWithinItsTimeout) {
  TricklingServer server;
  ASSERT_GT(server.port(), 0);
  std::string answer;
  auto t0 = Clock::now();
  EXPECT_FALSE(AnswersHttp(server.port(), "/", 1000, &answer)) << answer;
  double took = Since(t0);
  EXPECT_LT(took, 3.0) << "a 1 s probe took " << took << " s; answer: " << answer;
  EXPECT_TRUE(absl::StrContains(answer, "within 1000 ms")) << answer;
}

TEST(ReadyProbeTest, ServerThatAcceptsTcpButNotHttpIsNeverReady) {
  const std::string kv = absl::StrCat(DS_REF_KV, " --port {port} --dir {dir}");
  // TCP: ready at once.
  auto tcp = SutProcess::Launch(Options(kv, "tcp", 10000));
  ASSERT_TRUE(tcp.ok()) << tcp.status();
  tcp->reset();
  // HTTP: the JSON-lines server never answers with a status line.
  auto t0 = Clock::now();
  auto http = SutProcess::Launch(Options(kv, "http:/health", 1500));
  double took = Since(t0);
  ASSERT_FALSE(http.ok());
  EXPECT_EQ(http.status().code(), absl::StatusCode::kDeadlineExceeded) << http.status();
  EXPECT_TRUE(absl::StrContains(http.status().message(), "did not answer GET /health with a 2xx/3xx/4xx status"))
      << http.status();
  EXPECT_GE(took, 1.5);
  EXPECT_LT(took, 4.0) << "bounded by the readiness timeout (+ one probe of at most 1 s)";
}

// A job launches its SUT with the target's probe (JobOptions::ready_probe),
// for the run and every shrinking rerun alike.
TEST(ReadyProbeTest, JobsLaunchWithTheTargetsProbe) {
  auto spec = lang::LoadSpec("kv.dspec", *lang::ReadFileToString(DUALSWARM_SOURCE_DIR "/specs/kv.dspec"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  JobOptions o;
  o.launch = absl::StrCat(DS_REF_KV, " --port {port} --dir {dir}");
  o.adapter = "jsonl";
  o.exec.steps = 5;
  o.ready_timeout_ms = 800;
  o.ready_probe = "http:/";  // ds-ref-kv never answers HTTP
  EXPECT_FALSE(RunJob(*spec, o).ok()) << "the job's probe was not used";
  o.ready_probe = "tcp";
  o.ready_timeout_ms = 10000;
  auto r = RunJob(*spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kPassed);
}

// A listener on 127.0.0.1 held by this test process (another session than
// any SUT's), on a port of the kernel's choosing or on `port`. It never
// accepts, and its backlog is 1: probes soon find it full.
class StrangerOnPort {
 public:
  explicit StrangerOnPort(int port = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 && ::listen(fd_, 1) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      port_ = ntohs(addr.sin_port);
  }
  ~StrangerOnPort() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A port that accepts connections is not enough: the listener must be the
// SUT's. Before, a SUT that never listened (or failed to bind and was
// about to exit) was "ready" on another program's port, and that
// program's answers were judged as the SUT's.
TEST(ReadyProbeTest, AStrangersListenerOnThePortIsNotTheSut) {
  StrangerOnPort stranger;
  ASSERT_GT(stranger.port(), 0);
  LaunchOptions o = Options("sleep 30", "tcp", 1000);
  o.port = stranger.port();
  auto t0 = Clock::now();
  auto sut = SutProcess::Launch(o);
  // Bounded by the readiness timeout, though the stranger never accepts:
  // its backlog fills, and a blocking connect then retried SYNs for two
  // minutes (135 s in CI).
  EXPECT_LT(Since(t0), 5.0);
  ASSERT_FALSE(sut.ok()) << "ready on a port this test holds";
  // Said at the readiness timeout (until then the SUT might yet bind).
  EXPECT_TRUE(absl::IsUnavailable(sut.status())) << sut.status();
  EXPECT_TRUE(absl::StrContains(sut.status().message(), absl::StrCat("pid ", ::getpid(), ") does"))) << sut.status();
}

// The nemesis's case: while a killed SUT is down another program takes
// its port; the revived SUT cannot bind it and exits. That is the
// machine's fault (Unavailable: a job error), not the SUT's crash.
TEST(ReadyProbeTest, ARevivedSutWhosePortWasTakenIsAnErrorOfTheMachine) {
  LaunchOptions o = Options(absl::StrCat(DS_REF_KV, " --port {port} --dir {dir}"), "tcp", 3000);
  auto sut = SutProcess::Launch(o);
  ASSERT_TRUE(sut.ok()) << sut.status();
  (*sut)->Kill();
  StrangerOnPort stranger((*sut)->port());
  ASSERT_EQ(stranger.port(), (*sut)->port());
  absl::Status revived = (*sut)->Revive(o);
  EXPECT_TRUE(absl::IsUnavailable(revived)) << revived;
  EXPECT_TRUE(absl::StrContains(revived.message(), absl::StrCat("port ", (*sut)->port()))) << revived;
}

// Every launched SUT's port is leased (port_lease.h): below the kernel's
// ephemeral range, locked while the SUT lives, released with it.
TEST(ReadyProbeTest, ALaunchedSutHoldsALeaseOnItsPort) {
  auto sut = SutProcess::Launch(Options(absl::StrCat(DS_REF_KV, " --port {port} --dir {dir}"), "tcp", 10000));
  ASSERT_TRUE(sut.ok()) << sut.status();
  const int port = (*sut)->port();
  const std::string lock = absl::StrCat(kPortLeaseDir, "/", port);
  EXPECT_EQ(::access(lock.c_str(), F_OK), 0) << lock;
  EXPECT_LT(port, 32768) << "in the ephemeral range (net.ipv4.ip_local_port_range)";
  sut->reset();
  EXPECT_NE(::access(lock.c_str(), F_OK), 0) << lock << " outlived its SUT";
}

TEST(ReadyProbeTest, BadProbesAreRefused) {
  for (const char* bad : {"udp", "http:", "http:/a b", "http:/x\r\nHost: evil", "http://host/x", "HTTP:/x"}) {
    auto p = util::ParseReadyProbe(bad);
    EXPECT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  auto p = util::ParseReadyProbe("http:/health?x=1");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->http);
  EXPECT_EQ(p->path, "/health?x=1");
  EXPECT_FALSE(util::ParseReadyProbe("tcp")->http);
  EXPECT_FALSE(SutProcess::Launch(Options("true {port}", "udp", 100)).ok());
}

}  // namespace
}  // namespace dualswarm::workers
