// dualswarm-worker: the worker daemon, and the job process it starts.
//
//   dualswarm-worker --coordinator HOST:PORT --token T [--slots N] [--labels k=v,...]
//                    [--work-dir DIR] [--metrics-listen HOST:PORT] [--tls-ca FILE] ...
//   dualswarm-worker run-job --job FILE --out FILE [--work-root DIR] [--progress-fd N]
//                    (internal: one leased job, started by the daemon)
//
// SIGINT/SIGTERM: stop leasing, let running jobs finish (--drain-seconds),
// report, exit 0. A second signal abandons the running jobs at once.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "util/help_flag.h"
#include "util/huge_pages.h"
#include "util/hyphen_flags.h"
#include "workers/adapters/adapter_kinds.h"
#include "workers/daemon/daemon.h"
#include "workers/daemon/job_child.h"
#include "workers/daemon/worker_metrics.h"

ABSL_FLAG(std::string, coordinator, "",
          "HOST:PORT of the coordinator's gRPC API (default: $DUALSWARM_ADDR, else 127.0.0.1:7420)");
ABSL_FLAG(std::string, token, "", "bearer token of role worker (default: $DUALSWARM_TOKEN)");
ABSL_FLAG(std::string, tls_ca, "", "PEM root certificate: talk TLS to the coordinator");
ABSL_FLAG(int, slots, 1, "jobs run at once (1..256)");
ABSL_FLAG(std::string, labels, "", "labels this worker carries, k=v,k=v (targets may require labels)");
ABSL_FLAG(std::string, adapters, absl::StrJoin(dualswarm::workers::DefaultWorkerAdapters(), ","),
          "adapters this worker hosts (comma-separated; default: every one it has); \"explore\": it takes explore "
          "runs' jobs, which model-check a spec and start no SUT (docs/explore.md)");
ABSL_FLAG(std::string, name, "", "name shown by the coordinator (default: the host name)");
ABSL_FLAG(std::string, work_dir, "",
          "directory for job directories and SUT directories (default: $TMPDIR/dualswarm-worker-PID)");
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT to serve Prometheus /metrics on (port 0: any free port; empty: off)");
ABSL_FLAG(int, lease_wait_ms, 2000, "how long a LeaseJobs long-poll waits for a job");
ABSL_FLAG(double, drain_seconds, 30, "on SIGTERM: how long running jobs may finish before they are abandoned");
ABSL_FLAG(bool, keep_job_dirs, false, "keep the directories of reported jobs (errored jobs are always kept)");
ABSL_FLAG(int, shrink_reruns, 500, "shrinking budget per finding, in reruns against fresh SUTs");
ABSL_FLAG(double, shrink_time, 60, "shrinking budget per finding, in seconds");
ABSL_FLAG(int, shrink_jobs, 1,
          "shrinking candidates rerun at once, each against its own fresh SUT (1-16): more overlap reruns "
          "that wait, and take more of the machine than the job's slot");
ABSL_FLAG(int, prelaunch, -1,
          "the most fresh SUTs a shrinking job launches ahead of its reruns (0-16; -1: 4, or --shrink-jobs if "
          "more; 0: each rerun launches its own)");
ABSL_FLAG(bool, borrow_slots, true,
          "a job that shrinks a finding reruns one more candidate at once for every slot of this worker no job "
          "holds, and gives the slots back when shrinking ends");
ABSL_FLAG(std::string, slot_dir, "",
          "run-job: the worker's slot files (--slots of them), to borrow the free ones while shrinking");
ABSL_FLAG(double, budget_grace, 10,
          "a job still running this many seconds past its time budget (+ the SUT's readiness timeout, + "
          "--shrink-time while shrinking) is killed with its SUTs and reported as an error");
ABSL_FLAG(double, max_job_seconds, 3600,
          "a job without a time budget still running after this many seconds (shrinking included) is "
          "killed with its SUTs and reported as an error (0: no limit)");
// run-job (internal)
ABSL_FLAG(std::string, job, "", "run-job: the lease (serialized dualswarm.v1.LeasedJob)");
ABSL_FLAG(std::string, out, "", "run-job: where the CompleteJob request goes");
ABSL_FLAG(std::string, work_root, "/tmp", "run-job: SUT directories go under this");
ABSL_FLAG(int, progress_fd, 1, "run-job: file descriptor for progress lines");

namespace {

constexpr const char* kUsage =
    "dualswarm-worker: runs Dualswarm jobs leased from a coordinator.\n\n"
    "  dualswarm-worker --coordinator HOST:PORT --token T [--slots N] [--labels k=v,...]\n"
    "                   [--work-dir DIR] [--metrics-listen HOST:PORT] [--tls-ca FILE]\n"
    "                   [--drain-seconds S] [--shrink-reruns N] [--shrink-time S] [--shrink-jobs N] [--prelaunch N]\n"
    "                   [--borrow-slots=false]\n"
    "                   [--budget-grace S]\n"
    "                   [--max-job-seconds S]\n\n"
    "Each job runs in its own child process; SUTs start in fresh directories on free\n"
    "loopback ports and their whole process groups are torn down. A job still running\n"
    "--budget-grace seconds past its time budget (+ SUT start, + --shrink-time while\n"
    "shrinking; a job without a budget: --max-job-seconds) is killed with its SUTs and\n"
    "reported as an error. SIGTERM/SIGINT: stop\n"
    "leasing, let running jobs finish for --drain-seconds, report, exit; a second\n"
    "signal abandons running jobs at once (their leases expire and other workers\n"
    "take them). Exit: 0 clean stop, 1 the coordinator refused the token, 2 bad flags.";

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipWhitespace())) out.emplace_back(part);
  return out;
}

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

int RunJobMain() {
  dualswarm::workers::JobChildOptions o;
  o.job_file = absl::GetFlag(FLAGS_job);
  o.result_file = absl::GetFlag(FLAGS_out);
  o.work_root = absl::GetFlag(FLAGS_work_root);
  o.progress_fd = absl::GetFlag(FLAGS_progress_fd);
  o.shrink_max_reruns = absl::GetFlag(FLAGS_shrink_reruns);
  o.shrink_max_seconds = absl::GetFlag(FLAGS_shrink_time);
  o.shrink_jobs = absl::GetFlag(FLAGS_shrink_jobs);
  o.prelaunch = absl::GetFlag(FLAGS_prelaunch);
  o.slot_dir = absl::GetFlag(FLAGS_slot_dir);
  o.slots = std::clamp(absl::GetFlag(FLAGS_slots), 0, 256);  // the daemon's, as many slot files
  if (o.job_file.empty() || o.result_file.empty()) {
    std::cerr << "dualswarm-worker run-job: needs --job FILE and --out FILE\n";
    return 2;
  }
  return dualswarm::workers::RunJobChild(o);
}

// The daemon's options from its flags (and DUALSWARM_ADDR/DUALSWARM_TOKEN);
// what is wrong with them, or "" when nothing is.
std::string DaemonOptionsFromFlags(const char* argv0, dualswarm::workers::DaemonOptions* o) {
  o->coordinator = absl::GetFlag(FLAGS_coordinator);
  if (o->coordinator.empty()) o->coordinator = EnvOr("DUALSWARM_ADDR", "127.0.0.1:7420");
  o->token = absl::GetFlag(FLAGS_token);
  if (o->token.empty()) o->token = EnvOr("DUALSWARM_TOKEN", "");
  o->slots = absl::GetFlag(FLAGS_slots);
  if (o->slots < 1 || o->slots > 256) return "--slots must be between 1 and 256";
  o->labels = SplitList(absl::GetFlag(FLAGS_labels));
  for (const auto& l : o->labels)
    if (l.find('=') == std::string::npos) return absl::StrCat("label \"", l, "\" is not k=v");
  o->adapters = SplitList(absl::GetFlag(FLAGS_adapters));
  for (const auto& a : o->adapters)
    if (absl::Status s = dualswarm::workers::CheckAdapterKind(a); !s.ok() && a != dualswarm::workers::kExploreAdapter)
      return std::string(s.message());
  o->name = absl::GetFlag(FLAGS_name);
  o->work_dir = absl::GetFlag(FLAGS_work_dir);
  if (o->work_dir.empty())
    o->work_dir = (std::filesystem::temp_directory_path() / absl::StrCat("dualswarm-worker-", getpid())).string();
  o->work_dir = std::filesystem::absolute(o->work_dir).lexically_normal().string();
  o->lease_wait_ms = absl::GetFlag(FLAGS_lease_wait_ms);
  if (o->lease_wait_ms < 0 || o->lease_wait_ms > 60000) return "--lease-wait-ms must be between 0 and 60000";
  o->drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  o->keep_job_dirs = absl::GetFlag(FLAGS_keep_job_dirs);
  o->shrink_max_reruns = absl::GetFlag(FLAGS_shrink_reruns);
  o->shrink_max_seconds = absl::GetFlag(FLAGS_shrink_time);
  o->shrink_jobs = absl::GetFlag(FLAGS_shrink_jobs);
  if (o->shrink_jobs < 1 || o->shrink_jobs > 16) return "--shrink-jobs must be between 1 and 16";
  o->prelaunch = absl::GetFlag(FLAGS_prelaunch);
  o->borrow_slots = absl::GetFlag(FLAGS_borrow_slots);
  if (o->prelaunch < -1 || o->prelaunch > 16) return "--prelaunch must be between 0 and 16 (-1: the default)";
  o->budget_grace_seconds = absl::GetFlag(FLAGS_budget_grace);
  if (o->budget_grace_seconds < 0 || o->budget_grace_seconds > 3600)
    return "--budget-grace must be between 0 and 3600 seconds";
  o->max_job_seconds = absl::GetFlag(FLAGS_max_job_seconds);
  if (o->max_job_seconds < 0) return "--max-job-seconds must not be negative";
  std::string ca = absl::GetFlag(FLAGS_tls_ca);
  if (!ca.empty()) {
    std::ifstream in(ca, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in || ss.str().empty()) return absl::StrCat("cannot read --tls-ca ", ca);
    o->tls_ca = ss.str();
  }
  std::error_code ec;
  o->self_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) o->self_exe = argv0;
  return "";
}

int DaemonMain(const char* argv0) {
  dualswarm::workers::DaemonOptions o;
  if (std::string bad = DaemonOptionsFromFlags(argv0, &o); !bad.empty()) {
    std::cerr << "dualswarm-worker: " << bad << "\n";
    return 2;
  }

  // Signals are taken by a dedicated thread; block them everywhere else.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  static std::atomic<bool> stop{false}, abandon{false};

  dualswarm::workers::WorkerMetrics metrics;
  std::string metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  if (!metrics_listen.empty()) {
    auto port = metrics.Serve(metrics_listen);
    if (!port.ok()) {
      std::cerr << "dualswarm-worker: " << port.status().message() << "\n";
      return 2;
    }
    std::string host = metrics_listen.substr(0, metrics_listen.rfind(':'));
    // One write: tests and scripts read the port from this line.
    std::cerr << absl::StrCat("dualswarm-worker: metrics on ", host, ":", *port, "\n") << std::flush;
  }
  o.metrics = &metrics;

  std::thread signals([&] {
    for (;;) {
      int sig = 0;
      if (sigwait(&stop_signals, &sig) != 0) continue;
      if (sig == 0) return;
      if (!stop.exchange(true)) {
        std::cerr << "dualswarm-worker: signal " << sig << ": stopping" << std::endl;
      } else {
        abandon = true;
        std::cerr << "dualswarm-worker: second signal: abandoning running jobs" << std::endl;
        return;
      }
    }
  });
  signals.detach();
  return dualswarm::workers::RunDaemon(o, &stop, &abandon);
}

}  // namespace

int main(int argc, char** argv) {
  dualswarm::UseHugePagesForTheHeap();
  absl::SetProgramUsageMessage(kUsage);
  if (dualswarm::util::AnswerHelp(argc, argv, kUsage, "daemon/main.")) return 0;
  std::vector<std::string> storage;
  std::vector<char*> args = dualswarm::util::NormaliseFlagNames(argc, argv, &storage);
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  std::vector<std::string> cmd(positional.begin() + 1, positional.end());
  if (cmd.empty()) return DaemonMain(argv[0]);
  if (cmd.size() == 1 && cmd[0] == "run-job") return RunJobMain();
  std::cerr << "dualswarm-worker: unknown command \"" << cmd[0] << "\"\n" << kUsage << "\n";
  return 2;
}
