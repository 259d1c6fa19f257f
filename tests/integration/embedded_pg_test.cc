// Integration tests of the embedded PostgreSQL helper: start, stop, restart
// with data kept, ownership when run as root, password auth over TCP, bad
// directories, missing binaries, and the watchdog that stops the server when
// its owner dies without stopping it.
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tests/integration/pg_fixture.h"

namespace dualswarm::coord {
namespace {

class EmbeddedPgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ds-pgtest-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    chmod(tmp_.c_str(), 0711);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
  }
  EmbeddedPostgres::Options Opts() {
    EmbeddedPostgres::Options o;
    o.root = tmp_ + "/db";
    o.unsafe_fast = true;
    return o;
  }
  std::string tmp_;
};

TEST_F(EmbeddedPgTest, StartStopRestartKeepsData) {
  EmbeddedPostgres pg(Opts());
  DS_ASSERT_OK(pg.Start());
  EXPECT_TRUE(pg.running());
  EXPECT_GT(pg.port(), 0);
  {
    pqxx::connection c(pg.ConnectionString());
    pqxx::work w(c);
    w.exec("CREATE TABLE t (x int)");
    w.exec("INSERT INTO t VALUES (42)");
    w.commit();
  }
  DS_ASSERT_OK(pg.Stop());
  EXPECT_FALSE(pg.running());
  DS_ASSERT_OK(pg.Stop());  // idempotent
  EXPECT_THROW(pqxx::connection c(pg.ConnectionString()), pqxx::broken_connection);

  DS_ASSERT_OK(pg.Start());
  pqxx::connection c(pg.ConnectionString());
  pqxx::work w(c);
  EXPECT_EQ(w.exec1("SELECT x FROM t")[0].as<int>(), 42);
}

TEST_F(EmbeddedPgTest, SecondStartAttachesToTheRunningServer) {
  EmbeddedPostgres owner(Opts());
  DS_ASSERT_OK(owner.Start());
  EXPECT_TRUE(owner.owned());
  EmbeddedPostgres guest(Opts());  // e.g. `token create` next to a running coordinator
  DS_ASSERT_OK(guest.Start());
  EXPECT_FALSE(guest.owned());
  EXPECT_EQ(guest.port(), owner.port());
  {
    pqxx::connection c(guest.ConnectionString());
    EXPECT_TRUE(c.is_open());
  }
  DS_ASSERT_OK(guest.Stop());
  pqxx::connection c(owner.ConnectionString());  // still running
  EXPECT_TRUE(c.is_open());
}

TEST_F(EmbeddedPgTest, ClusterOwnershipAndTcpPasswordAuth) {
  EmbeddedPostgres pg(Opts());
  DS_ASSERT_OK(pg.Start());
  struct stat st;
  ASSERT_EQ(stat(pg.cluster_dir().c_str(), &st), 0);
  if (geteuid() == 0) {
    // initdb refuses root: the cluster belongs to the postgres user.
    struct passwd* pw = getpwnam("postgres");
    ASSERT_NE(pw, nullptr);
    EXPECT_EQ(st.st_uid, pw->pw_uid);
  } else {
    EXPECT_EQ(st.st_uid, geteuid());
  }
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::ifstream in(tmp_ + "/db/password");
  std::string password;
  std::getline(in, password);
  ASSERT_EQ(password.size(), 48u);
  struct stat pst;
  ASSERT_EQ(stat((tmp_ + "/db/password").c_str(), &pst), 0);
  EXPECT_EQ(pst.st_mode & 0777, 0600u);
  std::string tcp = absl::StrCat("host=127.0.0.1 port=", pg.port(), " user=dualswarm dbname=dualswarm");
  EXPECT_THROW(pqxx::connection c(tcp + " password=wrong"), pqxx::broken_connection);
  pqxx::connection c(absl::StrCat(tcp, " password=", password));
  pqxx::work w(c);
  EXPECT_EQ(w.exec1("SELECT current_user")[0].as<std::string>(), "dualswarm");
}

TEST_F(EmbeddedPgTest, BadDirectoriesAndMissingBinaries) {
  auto o = Opts();
  o.root = "relative/dir";
  EXPECT_EQ(EmbeddedPostgres(o).Start().code(), absl::StatusCode::kInvalidArgument);
  o.root = tmp_ + "/with space";
  EXPECT_EQ(EmbeddedPostgres(o).Start().code(), absl::StatusCode::kInvalidArgument);
  o.root = tmp_ + "/" + std::string(120, 'x');
  EXPECT_EQ(EmbeddedPostgres(o).Start().code(), absl::StatusCode::kInvalidArgument);
  o = Opts();
  o.bin_dir = "/nonexistent/bin";
  absl::Status st = EmbeddedPostgres(o).Start();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_NE(st.message().find("postgresql"), absl::string_view::npos) << st;
}

TEST_F(EmbeddedPgTest, WatchdogStopsTheServerWhenItsOwnerDies) {
  // A child process starts the server and dies without stopping it.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    EmbeddedPostgres* pg = new EmbeddedPostgres(Opts());  // never destroyed
    int port = pg->Start().ok() ? pg->port() : -1;
    (void)!write(fds[1], &port, sizeof port);
    _exit(0);
  }
  close(fds[1]);
  int port = -1;
  ASSERT_EQ(read(fds[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_GT(port, 0) << "the child could not start the server";
  std::string pidfile = tmp_ + "/db/pg/postmaster.pid";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (access(pidfile.c_str(), F_OK) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(access(pidfile.c_str(), F_OK), 0) << "the server outlived its owner";
  // And the cluster starts again (recovering from the immediate shutdown).
  EmbeddedPostgres again(Opts());
  DS_ASSERT_OK(again.Start());
}

}  // namespace
}  // namespace dualswarm::coord
