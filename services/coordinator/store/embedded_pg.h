// EmbeddedPostgres: a private PostgreSQL server in a directory of our own,
// so the coordinator works with one command on a fresh machine and the
// integration tests get a real database in a temporary directory.
//
// Layout of `root` (created if missing):
//   root/pg/            the cluster (initdb), owned by the server's user
//   root/pg/server.log  the server's log
//   root/password       the superuser's password for TCP clients (mode 0600)
//
// The server listens on 127.0.0.1:PORT (a free port chosen at each start,
// password auth) and on a unix socket inside root/pg (trust auth; the
// directory is mode 0700, so only its owner and root can reach it). Our own
// connections use the socket.
//
// Root: initdb and postgres refuse to run as root. When started as root the
// helper creates root/pg owned by the `postgres` user (created by Debian's
// postgresql package) and runs initdb and pg_ctl through
// `runuser -u postgres --`. `root` and its ancestors must then be
// searchable by that user (mode o+x); Start says so when they are not.
//
// A watchdog process stops the server (pg_ctl stop -m immediate) if this
// process dies without calling Stop(), so a crashed test or coordinator
// does not leave a server behind.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_EMBEDDED_PG_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_EMBEDDED_PG_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dualswarm::coord {

class EmbeddedPostgres {
 public:
  struct Options {
    std::string root;                                    // directory described above
    std::string bin_dir = "/usr/lib/postgresql/15/bin";  // initdb, pg_ctl, postgres
    std::string database = "dualswarm";                  // created on first start
    std::string superuser = "dualswarm";                 // the cluster's superuser
    std::string run_as = "postgres";                     // OS user when we are root
    int port = 0;                                        // 0: a free port at each start
    // Trade durability for speed (fsync=off, synchronous_commit=off): for
    // tests and benchmarks only. A clean Stop() still keeps every commit.
    bool unsafe_fast = false;
    int start_timeout_s = 60;
  };

  explicit EmbeddedPostgres(Options options);
  ~EmbeddedPostgres();  // Stop()s a running server
  EmbeddedPostgres(const EmbeddedPostgres&) = delete;
  EmbeddedPostgres& operator=(const EmbeddedPostgres&) = delete;

  // Initialises the cluster if root/pg is not one yet, starts the server,
  // waits until it accepts connections and creates the database if missing.
  // If a server already runs on the cluster (started by another process),
  // attaches to it instead; Stop() then leaves it running.
  // FailedPrecondition when the binaries or the postgres user are missing,
  // Internal with the tail of the log when initdb or the server fails.
  absl::Status Start();
  // Fast shutdown (clients are disconnected, every commit is kept).
  // Idempotent.
  absl::Status Stop();
  bool running() const { return running_; }
  bool owned() const { return owned_; }

  int port() const { return port_; }
  // libpq keyword/value connection string for the database through the
  // unix socket, e.g. "host=/x/pg port=5433 user=dualswarm dbname=dualswarm".
  std::string ConnectionString() const;
  std::string ConnectionString(const std::string& dbname) const;
  const std::string& cluster_dir() const { return cluster_dir_; }
  // The last lines of the server log (for error messages).
  std::string LogTail(int max_lines = 30) const;

 private:
  absl::Status InitCluster();
  absl::Status StartServer();
  absl::Status CreateDatabase();
  void StartWatchdog();
  void StopWatchdog();
  // argv with "runuser -u USER --" in front when we are root.
  std::vector<std::string> AsServerUser(std::vector<std::string> argv) const;

  Options options_;
  std::string cluster_dir_;
  bool as_root_ = false;
  bool running_ = false;
  bool owned_ = true;  // false: attached to a server another process started
  int port_ = 0;
  pid_t watchdog_pid_ = -1;
  int watchdog_fd_ = -1;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_EMBEDDED_PG_H_
