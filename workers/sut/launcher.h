// SUT lifecycle: starts a system under test from a command template in a
// fresh directory on a leased loopback port (port_lease.h), waits
// (bounded) until it is ready — it accepts TCP connections (probe "tcp"),
// or it answers `GET PATH` with any 2xx/3xx/4xx status (probe
// "http:/PATH"), and the listener there is its own (port_owner.h) — and
// tears down its whole process group.
// Template placeholders: {port} and {dir} (a cluster adds its own, see
// cluster.h). The command runs under /bin/sh
// in its own session, in the caller's working directory (so relative paths
// work); its stdout/stderr go to {dir}/sut.log.
#ifndef DUALSWARM_WORKERS_SUT_LAUNCHER_H_
#define DUALSWARM_WORKERS_SUT_LAUNCHER_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/ready_probe.h"
#include "workers/sut/port_lease.h"

namespace dualswarm::workers {

struct LaunchOptions {
  std::string command;           // e.g. "ds-ref-webdav --port {port} --dir {dir}"
  int ready_timeout_ms = 10000;  // how long to wait for the probe to pass
  std::string work_root = "/tmp";
  // "tcp" or "http:/PATH" (util/ready_probe.h).
  std::string ready_probe = "tcp";
  // The port {port} names and the probe tries; 0 = one leased for the
  // process's lifetime (the caller holds the lease of any other).
  int port = 0;
  // More placeholders to replace in `command` (e.g. "{node}" -> "2").
  std::vector<std::pair<std::string, std::string>> placeholders;

  bool operator==(const LaunchOptions&) const = default;
};

class SutProcess {
 public:
  // FailedPrecondition (with the tail of sut.log) when the command exits
  // early or never becomes ready.
  static absl::StatusOr<std::unique_ptr<SutProcess>> Launch(const LaunchOptions& options);
  // The two halves of Launch, for clusters whose nodes become ready only
  // together: Start runs the command, WaitReady waits for the probe (and
  // returns Cancelled as soon as `*cancel` is true).
  static absl::StatusOr<std::unique_ptr<SutProcess>> Start(const LaunchOptions& options);
  absl::Status WaitReady(const LaunchOptions& options, const std::atomic<bool>* cancel = nullptr);
  ~SutProcess();  // Stop() and remove the directory

  // Faults (a nemesis): Kill kills the process group with SIGKILL (no
  // chance to flush anything); Revive kills it if it runs, runs the same
  // command again in the same directory on the same port, its output
  // appended to sut.log, and waits until it is ready. Pause stops the group
  // (SIGSTOP: connections stay open, nothing is answered), Resume
  // continues it.
  void Kill();
  absl::Status Revive(const LaunchOptions& options);
  void Pause();
  void Resume();
  bool paused() const { return paused_; }

  // Runs `command_template` (with the SUT's placeholders, e.g. a reset:
  // "find {dir}/root -mindepth 1 -delete") under /bin/sh to its end, its
  // output in {dir}/aside.log: OK when it exits 0 within `timeout_ms`.
  absl::Status RunAside(const std::string& command_template, const LaunchOptions& options, int timeout_ms);

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  // True while the process is alive; fills *status text when it exited.
  bool Alive(std::string* status = nullptr);
  // SIGTERM to the process group, SIGKILL after 2 s.
  void Stop();
  // The last `max_bytes` of sut.log.
  std::string LogTail(size_t max_bytes = 2000) const;

 private:
  SutProcess() = default;
  // Forks `command_` in its own session in dir_, output to dir_/sut.log.
  absl::Status Spawn(bool append_log);
  // `command_template` with {port}, {dir} and the options' placeholders.
  std::string Expand(const std::string& command_template, const LaunchOptions& options) const;

  pid_t pid_ = -1;
  std::optional<PortLease> lease_;  // when the port was picked here
  int port_ = 0;
  std::string dir_;
  std::string command_;  // as run (placeholders replaced), for errors
  bool reaped_ = false;
  int wait_status_ = 0;
  bool paused_ = false;  // SIGSTOPped by Pause
};

// A process-wide observer told the process-group id of every SUT this
// process starts (started = true) and stops (started = false). The worker's
// job process reports them to the daemon, which kills whatever group is left
// if the job process itself dies. Set once before launching; nullptr: none.
using SutObserver = void (*)(pid_t pgid, bool started);
void SetSutObserver(SutObserver observer);

// Whether 127.0.0.1:port (or host:port) accepts a TCP connection within
// `timeout_ms`.
bool CanConnect(const std::string& host, int port, int timeout_ms = 1000);
// Whether 127.0.0.1:port answers `GET path` with a 2xx/3xx/4xx status line
// within `timeout_ms`; *answer gets the status line (or why there is none).
bool AnswersHttp(int port, const std::string& path, int timeout_ms, std::string* answer);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_LAUNCHER_H_
