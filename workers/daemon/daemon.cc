#include "workers/daemon/daemon.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "proto/names/wire_names.h"
#include "workers/daemon/job_plan.h"
#include "workers/daemon/job_process.h"
#include "workers/daemon/slot_tokens.h"
#include "workers/daemon/spec_cache.h"

namespace dualswarm::workers {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

void Log(const std::string& msg) {
  std::string line =
      absl::StrCat(absl::FormatTime("%H:%M:%E3S", absl::Now(), absl::UTCTimeZone()), " dualswarm-worker: ", msg, "\n");
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

// "passed", "safety", ...; "?" for a value this build does not know.
template <typename E>
std::string WordOf(E value) {
  std::string w = wire::EnumWord(value);
  return w.empty() ? "?" : w;
}

// Transient: the call may succeed later as it is.
bool Transient(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED || s.error_code() == grpc::StatusCode::ABORTED ||
         s.error_code() == grpc::StatusCode::INTERNAL || s.error_code() == grpc::StatusCode::UNKNOWN ||
         s.error_code() == grpc::StatusCode::CANCELLED;
}

bool AuthError(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAUTHENTICATED || s.error_code() == grpc::StatusCode::PERMISSION_DENIED;
}

std::string Describe(const grpc::Status& s) {
  return absl::StrCat(wire::StatusCodeName(s.error_code(), "?"), ": ", s.error_message());
}

// One leased job on this worker, from lease to report.
struct Slot {
  v1::LeasedJob job;
  std::unique_ptr<JobProcess> proc;
  bool running = false;
  bool cancelled = false;                       // the coordinator asked us to stop it (run cancelled)
  bool lost = false;                            // the lease is no longer ours
  std::optional<Clock::time_point> stop_asked;  // when the child got SIGTERM
  std::optional<v1::CompleteJobRequest> report;
  Clock::time_point next_try{};
  double backoff_s = 0.2;
  uint64_t counted_sent = 0;  // requests already added to the metrics
  std::string dir;
  SlotToken token;  // this job's slot file, held while its child runs (slot_tokens.h)
};

class Daemon {
 public:
  Daemon(const DaemonOptions& o, const std::atomic<bool>* stop, const std::atomic<bool>* abandon)
      : o_(o), stop_(stop), abandon_(abandon) {}

  int Run() {
    std::error_code ec;
    std::filesystem::create_directories(o_.work_dir, ec);
    if (ec) {
      Log(absl::StrCat("cannot create the work directory ", o_.work_dir, ": ", ec.message()));
      return 2;
    }
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    args.SetMaxReceiveMessageSize(64 << 20);
    std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
    if (!o_.tls_ca.empty()) {
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = o_.tls_ca;
      creds = grpc::SslCredentials(ssl);
    }
    stub_ = v1::WorkerService::NewStub(grpc::CreateCustomChannel(o_.coordinator, creds, args));
    if (o_.metrics) o_.metrics->SetSlots(o_.slots);
    slot_dir_ = absl::StrCat(o_.work_dir, "/slots");
    if (absl::Status s = CreateSlotFiles(slot_dir_, o_.slots); !s.ok()) {
      Log(std::string(s.message()));
      return 2;
    }

    if (int rc = Register(); rc != 0) return rc;
    std::thread leaser([this] { LeaseLoop(); });
    std::thread beater([this] { HeartbeatLoop(); });
    int rc = Supervise();
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    leaser.join();
    beater.join();
    Log(rc == 0 ? "stopped" : "stopped after an error");
    return rc;
  }

 private:
  bool Stopping() const { return stop_->load() || abandon_->load() || fatal_.load(); }

  std::unique_ptr<grpc::ClientContext> Ctx(int64_t deadline_ms) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!o_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + o_.token);
    ctx->set_deadline(std::chrono::system_clock::now() + milliseconds(deadline_ms));
    return ctx;
  }

  // Sleeps up to `d`, waking early when the daemon finishes or stops.
  void Pause(Clock::duration d) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, d, [&] { return done_ || Stopping(); });
  }

  // Registers; retried with backoff while the coordinator is unreachable.
  int Register() {
    v1::RegisterWorkerRequest req;
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    req.set_name(o_.name.empty() ? std::string(host) : o_.name);
    req.set_slots(o_.slots);
    for (const auto& a : o_.adapters) req.add_adapters(a);
    for (const auto& l : o_.labels) req.add_labels(l);
    req.set_version("dualswarm-worker 0.1");
    double backoff = 0.2;
    bool told = false;
    while (!Stopping()) {
      v1::RegisterWorkerResponse resp;
      grpc::Status s = stub_->Register(Ctx(10000).get(), req, &resp);
      if (s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        worker_id_ = resp.worker_id();
        heartbeat_ms_ = std::max(50, resp.heartbeat_interval_ms());
        lease_ms_ = std::max(100, resp.lease_duration_ms());
        Log(absl::StrCat("registered with ", o_.coordinator, " as ", worker_id_, " (", o_.slots,
                         " slots, heartbeat every ", heartbeat_ms_, " ms)"));
        return 0;
      }
      if (!Transient(s)) {
        Log(absl::StrCat("the coordinator refused to register this worker: ", Describe(s)));
        fatal_ = true;
        return 1;
      }
      if (!told) Log(absl::StrCat("coordinator ", o_.coordinator, " unreachable (", Describe(s), "); retrying"));
      told = true;
      Pause(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(backoff)));
      backoff = std::min(backoff * 2, 5.0);
    }
    return 0;
  }

  int RunningLocked() const {
    int n = 0;
    for (const auto& [id, s] : slots_) n += s.running ? 1 : 0;
    return n;
  }

  void LeaseLoop() {
    double backoff = 0.2;
    bool outage = false;
    while (!Stopping()) {
      int free;
      std::string worker_id;
      {
        std::unique_lock<std::mutex> lock(mu_);
        // Slots a shrinking child borrowed are busy too (slot_tokens.h).
        free = std::min(o_.slots - RunningLocked(), CountFreeSlots(slot_dir_, o_.slots));
        worker_id = worker_id_;
        if (free <= 0) {
          cv_.wait_for(lock, milliseconds(500));
          continue;
        }
      }
      v1::LeaseJobsRequest req;
      req.set_worker_id(worker_id);
      req.set_max_jobs(free);
      req.set_wait_ms(o_.lease_wait_ms);
      for (const std::string& hash : spec_sources_.Known()) req.add_known_spec_hashes(hash);
      v1::LeaseJobsResponse resp;
      grpc::Status s = stub_->LeaseJobs(Ctx(o_.lease_wait_ms + 15000).get(), req, &resp);
      if (!s.ok()) {
        if (o_.metrics) o_.metrics->CoordinatorError("LeaseJobs");
        if (AuthError(s)) {
          Log(absl::StrCat("the coordinator refused the token: ", Describe(s)));
          fatal_ = true;
          break;
        }
        if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
          // The coordinator does not know this worker (a fresh database): register again.
          Log("the coordinator does not know this worker any more; registering again");
          if (Register() != 0) break;
          continue;
        }
        if (!outage) Log(absl::StrCat("leasing failed (", Describe(s), "); retrying with backoff"));
        outage = true;
        Pause(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(backoff)));
        backoff = std::min(backoff * 2, 5.0);
        continue;
      }
      if (outage) Log("the coordinator is back");
      outage = false;
      backoff = 0.2;
      std::vector<int64_t> sourceless = spec_sources_.Fill(&resp);
      for (const auto& job : resp.jobs()) {
        bool runnable = std::find(sourceless.begin(), sourceless.end(), job.job_id()) == sourceless.end();
        QueueJob(job, runnable ? ""
                               : "the coordinator sent the job without its spec source, and this worker "
                                 "holds no copy of that version");
      }
    }
  }

  // Called by the lease thread: the supervisor (main thread) starts the
  // process, so the child's parent-death signal is tied to a thread that
  // lives until the daemon ends.
  // A job that cannot run (`error` not empty) is reported as an error at once.
  void QueueJob(const v1::LeasedJob& job, const std::string& error) {
    Slot slot;
    slot.job = job;
    slot.running = error.empty();
    slot.dir = absl::StrCat(o_.work_dir, "/job-", job.job_id(), "-", job.attempt());
    if (!error.empty()) Log(absl::StrCat("job ", job.job_id(), ": ", error));
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error.empty()) {
        slot.report = CompletionForError(job, error, 0);
        slot.report->set_worker_id(worker_id_);
      }
      slots_[job.job_id()] = std::move(slot);
      work_queued_ = true;
    }
    cv_.notify_all();  // the supervisor starts it now, not at its next poll
  }

  // Starts a queued job's process (with mu_ held).
  void StartProcess(Slot& slot) {
    const v1::LeasedJob& job = slot.job;
    JobProcessOptions po;
    po.self_exe = o_.self_exe;
    po.job_dir = slot.dir;
    po.shrink_max_reruns = o_.shrink_max_reruns;
    po.shrink_max_seconds = o_.shrink_max_seconds;
    po.shrink_jobs = o_.shrink_jobs;
    po.prelaunch = o_.prelaunch;
    if (o_.borrow_slots) {
      po.slot_dir = slot_dir_;
      po.slots = o_.slots;
    }
    slot.token = HoldFreeSlot(slot_dir_, o_.slots);
    po.grace_seconds = o_.budget_grace_seconds;
    po.max_job_seconds = o_.max_job_seconds;
    auto proc = JobProcess::Start(job, po);
    if (!proc.ok()) {
      Log(absl::StrCat("job ", job.job_id(), ": cannot start the tester: ", proc.status().message()));
      slot.running = false;
      slot.report =
          CompletionForError(job, absl::StrCat("the worker could not start the tester: ", proc.status().message()), 0);
      return;
    }
    slot.proc = std::move(*proc);
    Log(absl::StrCat("job ", job.job_id(), " (run ", job.run_id(), " #", job.index(), ", attempt ", job.attempt(),
                     ", target ", job.target().name(), ", seed ", job.seed(), "): started"));
  }

  void HeartbeatLoop() {
    bool outage = false;
    auto last = Clock::now();
    for (;;) {
      int interval;
      {
        std::unique_lock<std::mutex> lock(mu_);
        interval = heartbeat_ms_;
        cv_.wait_for(lock, milliseconds(interval), [&] { return done_; });
        if (done_) return;
      }
      v1::HeartbeatRequest req;
      uint64_t largest_frontier = 0, sent_delta = 0;
      {
        std::lock_guard<std::mutex> lock(mu_);
        req.set_worker_id(worker_id_);
        for (auto& [id, s] : slots_) {
          if (s.lost) continue;
          v1::JobProgress* p = req.add_progress();
          p->set_job_id(id);
          p->set_lease_token(s.job.lease_token());
          if (s.proc) {
            const ChildProgress& cp = s.proc->progress();
            p->set_sent(cp.sent);
            p->set_received(cp.received);
            p->set_frontier(cp.frontier);
            if (s.running) largest_frontier = std::max<uint64_t>(largest_frontier, cp.frontier);
            if (cp.sent > s.counted_sent) {
              sent_delta += cp.sent - s.counted_sent;
              s.counted_sent = cp.sent;
            }
          }
        }
      }
      auto now = Clock::now();
      if (o_.metrics) {
        double dt = std::chrono::duration<double>(now - last).count();
        o_.metrics->AddRequests(sent_delta);
        o_.metrics->SetStepsPerSecond(dt > 0 ? static_cast<double>(sent_delta) / dt : 0);
        o_.metrics->SetFrontier(largest_frontier);
      }
      last = now;
      v1::HeartbeatResponse resp;
      grpc::Status s = stub_->Heartbeat(Ctx(std::max(interval, 5000)).get(), req, &resp);
      if (!s.ok()) {
        if (o_.metrics) o_.metrics->CoordinatorError("Heartbeat");
        if (!outage) Log(absl::StrCat("heartbeat failed (", Describe(s), ")"));
        outage = true;
        continue;
      }
      outage = false;
      std::lock_guard<std::mutex> lock(mu_);
      for (int64_t id : resp.cancel_job_ids()) {
        auto it = slots_.find(id);
        if (it == slots_.end() || it->second.cancelled) continue;
        it->second.cancelled = true;
        Log(absl::StrCat("job ", id, ": its run was cancelled; stopping it"));
        if (it->second.proc) {
          it->second.proc->Terminate();
          it->second.stop_asked = Clock::now();
        }
      }
      for (int64_t id : resp.lost_job_ids()) {
        auto it = slots_.find(id);
        if (it == slots_.end() || it->second.lost) continue;
        // Completed slots also show up as lost once their report landed.
        if (!it->second.running && !it->second.report) continue;
        it->second.lost = true;
        Log(absl::StrCat("job ", id, ": the lease is no longer ours; dropping it"));
        if (it->second.proc) {
          it->second.proc->Terminate();
          it->second.stop_asked = Clock::now();
        }
      }
    }
  }

  // One pass over the slots (Supervise): starts queued jobs, kills jobs that
  // ignored a stop, turns exits into reports and drops finished slots.
  // Returns the jobs whose reports are due.
  std::vector<int64_t> SweepSlots(bool* any_running, bool* any_report) {
    std::vector<int64_t> due;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = slots_.begin(); it != slots_.end();) {
      Slot& s = it->second;
      if (s.running && s.proc == nullptr) {
        if (s.cancelled || s.lost) {
          s.running = false;
        } else {
          StartProcess(s);
        }
      }
      // A job told to stop gets 5 s to tear its SUT down, then SIGKILL
      // (the checker may be deep in a search that does not look up).
      if (s.running && s.proc && s.stop_asked && Clock::now() - *s.stop_asked > std::chrono::seconds(5)) {
        Log(absl::StrCat("job ", it->first, ": did not stop within 5 s; killing it"));
        s.proc->Kill();
      }
      if (s.running && !s.proc->Poll()) {
        s.running = false;
        s.token = SlotToken();  // the slot is free again
        cv_.notify_all();       // a slot is free
        Finished(s);
      }
      if (!s.running && !s.report) {
        Cleanup(s);
        it = slots_.erase(it);
        continue;
      }
      *any_running |= s.running;
      if (s.report) {
        *any_report = true;
        if (Clock::now() >= s.next_try) due.push_back(it->first);
      }
      ++it;
    }
    if (o_.metrics) o_.metrics->SetBusySlots(RunningLocked());
    return due;
  }

  // Polls children, turns exits into reports, sends due reports, and runs
  // the stop sequence. Returns the exit code.
  int Supervise() {
    std::optional<Clock::time_point> drain_deadline, terminated_at, flush_deadline;
    for (;;) {
      bool any_running = false, any_report = false;
      std::vector<int64_t> due = SweepSlots(&any_running, &any_report);
      for (int64_t id : due) SendReport(id);

      if (fatal_.load() && !any_running) return 1;
      if (Stopping()) {
        auto now = Clock::now();
        if (!drain_deadline) {
          drain_deadline = now + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(abandon_->load() ? 0 : o_.drain_seconds));
          if (any_running)
            Log(abandon_->load() ? "stopping: abandoning running jobs"
                                 : absl::StrCat("stopping: no new jobs; waiting up to ", o_.drain_seconds,
                                                " s for the running ones"));
        }
        if (abandon_->load()) drain_deadline = std::min(*drain_deadline, now);
        if (any_running && now >= *drain_deadline && !terminated_at) {
          Log("stopping: abandoning the running jobs (their leases expire and other workers take them)");
          std::lock_guard<std::mutex> lock(mu_);
          for (auto& [id, s] : slots_)
            if (s.running) {
              s.cancelled = true;
              if (s.proc) s.proc->Terminate();
            }
          terminated_at = now;
        }
        if (terminated_at && any_running && now - *terminated_at > std::chrono::seconds(5)) {
          std::lock_guard<std::mutex> lock(mu_);
          for (auto& [id, s] : slots_)
            if (s.running && s.proc) s.proc->Kill();
        }
        if (!any_running) {
          if (!any_report) return fatal_.load() ? 1 : 0;
          if (!flush_deadline) flush_deadline = now + std::chrono::seconds(10);
          if (now >= *flush_deadline) {
            Log("stopping: the coordinator did not take the last reports within 10 s; their leases will expire");
            return 0;
          }
        }
      }
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, milliseconds(any_running || any_report ? 25 : 100), [&] { return work_queued_; });
      work_queued_ = false;
    }
  }

  // A child exited: decide what to report (with mu_ held).
  void Finished(Slot& s) {
    if (s.proc == nullptr) return;  // cancelled before it started
    const ChildProgress& cp = s.proc->progress();
    if (o_.metrics) {
      if (cp.sent > s.counted_sent) o_.metrics->AddRequests(cp.sent - s.counted_sent);
      s.counted_sent = cp.sent;
      o_.metrics->AddSolver(cp.solver_checks, cp.z3_calls, cp.z3_seconds);
      if (cp.have_stats) o_.metrics->AddChecker(cp.check_seconds, cp.max_observe_seconds);
      o_.metrics->AddShrinkReruns(static_cast<uint64_t>(cp.shrink_reruns));
    }
    if (s.cancelled || s.lost) {
      Log(absl::StrCat("job ", s.job.job_id(), ": stopped (", s.lost ? "lease lost" : "cancelled", ")"));
      if (o_.metrics) o_.metrics->JobStopped(s.proc->seconds());
      return;
    }
    auto result = s.proc->Result();
    if (!result.ok()) {  // cancelled without being told: nothing to report
      Log(absl::StrCat("job ", s.job.job_id(), ": the tester stopped without a result"));
      if (o_.metrics) o_.metrics->JobStopped(s.proc->seconds());
      return;
    }
    s.report = *result;
    s.report->set_worker_id(worker_id_);
    if (o_.metrics) o_.metrics->JobEnded(s.report->outcome(), s.proc->seconds());
    std::string what = absl::StrCat("job ", s.job.job_id(), ": ", WordOf(s.report->outcome()), " in ",
                                    absl::StrFormat("%.1f", s.proc->seconds()), " s (", s.report->sent(), " requests)");
    if (s.report->outcome() == v1::JOB_OUTCOME_FAILED) {
      const auto& cx = s.report->counterexample();
      absl::StrAppend(&what, ", ", WordOf(cx.kind()), " finding ", cx.signature(), ", shrunk ", cx.unshrunk_size(),
                      " -> ", cx.size(), " requests");
      if (cp.shrink_jobs > 0)
        absl::StrAppend(&what, ", ", cp.shrink_jobs, " candidates at once (", cp.borrowed_slots,
                        " free slots borrowed)");
    } else if (s.report->outcome() == v1::JOB_OUTCOME_ERROR) {
      std::string first = s.report->reason().substr(0, s.report->reason().find('\n'));
      absl::StrAppend(&what, ": ", first);
    }
    Log(what);
  }

  void Cleanup(Slot& s) {
    if (o_.keep_job_dirs || s.dir.empty()) return;
    // Keep the directory of a job that errored: its tester.log explains it.
    if (s.report && s.report->outcome() == v1::JOB_OUTCOME_ERROR) return;
    std::error_code ec;
    std::filesystem::remove_all(s.dir, ec);
  }

  void SendReport(int64_t id) {
    v1::CompleteJobRequest req;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = slots_.find(id);
      if (it == slots_.end() || !it->second.report) return;
      if (it->second.lost) {
        it->second.report.reset();
        return;
      }
      req = *it->second.report;
      req.set_worker_id(worker_id_);
    }
    v1::CompleteJobResponse resp;
    grpc::Status s = stub_->CompleteJob(Ctx(10000).get(), req, &resp);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(id);
    if (it == slots_.end()) return;
    Slot& slot = it->second;
    if (s.ok()) {
      if (resp.duplicate()) Log(absl::StrCat("job ", id, ": report was already recorded"));
      if (!resp.coverage_refused().empty())
        Log(absl::StrCat("job ", id, ": coverage not recorded: ", resp.coverage_refused()));
      bool errored = slot.report->outcome() == v1::JOB_OUTCOME_ERROR;
      slot.report.reset();
      if (!errored || o_.keep_job_dirs) {
        std::error_code ec;
        if (!o_.keep_job_dirs) std::filesystem::remove_all(slot.dir, ec);
      }
      slots_.erase(it);
      return;
    }
    if (o_.metrics) o_.metrics->CoordinatorError("CompleteJob");
    if (Transient(s)) {
      if (slot.backoff_s <= 0.2) Log(absl::StrCat("job ", id, ": report failed (", Describe(s), "); retrying"));
      slot.next_try =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(slot.backoff_s));
      slot.backoff_s = std::min(slot.backoff_s * 2, 5.0);
      return;
    }
    // Stale lease, unknown job, or a request the coordinator cannot take:
    // retrying cannot help.
    Log(absl::StrCat("job ", id, ": the coordinator refused the report (", Describe(s), "); dropping it"));
    slot.report.reset();
  }

  DaemonOptions o_;
  const std::atomic<bool>* stop_;
  const std::atomic<bool>* abandon_;
  std::atomic<bool> fatal_{false};
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  // mu_ guards done_, work_queued_ and slots_; cv_ announces changes to
  // them (a job queued, a slot freed, the end).
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool work_queued_ = false;  // a leased job waits for the supervisor
  std::string worker_id_;     // set by Register before the other threads start
  int heartbeat_ms_ = 10000;
  int lease_ms_ = 30000;
  std::map<int64_t, Slot> slots_;
  std::string slot_dir_;          // the slots' lock files (slot_tokens.h); set by Run
  SpecSourceCache spec_sources_;  // the lease thread's alone
};

}  // namespace

int RunDaemon(const DaemonOptions& options, const std::atomic<bool>* stop, const std::atomic<bool>* abandon) {
  Daemon d(options, stop, abandon);
  return d.Run();
}

}  // namespace dualswarm::workers
