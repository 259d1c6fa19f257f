// WorkerService (proto/dualswarm/v1/worker.proto): the worker protocol.
// Workers register, lease jobs (a long-poll: LeaseJobs sleeps on the shared
// wake-up without holding a database connection, taking jobs through the
// lease pool), heartbeat their leases (learning which jobs to cancel) and
// complete jobs with their outcome and counterexample.
#include "services/coordinator/service/grpc_services.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/proto_convert.h"
#include "services/coordinator/service/handler_util.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {
namespace {

using Clock = ServiceState::Clock;

// A LeaseJobs response stops adding jobs at this size (it always carries
// one): far below what workers and the CLI accept (64 MiB), so a batch of
// jobs with large specs never makes a response nobody can read. One job is
// at most ~2 MiB (a 1 MiB spec source and a grpc target's 1 MiB descriptor
// set, store/limits.h), so a response still holds 3 of the largest.
constexpr size_t kLeaseResponseBudget = 8 << 20;
constexpr int kMaxKnownSpecHashes = 256;
// A completion's reason is cut to this many bytes.
constexpr size_t kMaxReasonBytes = 65536;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

class WorkerService final : public ServiceWithState<v1::WorkerService::Service> {
 public:
  using ServiceWithState::ServiceWithState;

  grpc::Status Register(grpc::ServerContext* ctx, const v1::RegisterWorkerRequest* req,
                        v1::RegisterWorkerResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    auto id = state_->store()->RegisterWorker(WorkerFromProto(*req));
    if (!id.ok()) return ToGrpc(id.status());
    int64_t lease_ms = state_->options().lease_ms;
    resp->set_worker_id(*id);
    resp->set_lease_duration_ms(static_cast<int32_t>(lease_ms));
    resp->set_heartbeat_interval_ms(static_cast<int32_t>(std::max<int64_t>(lease_ms / 3, 50)));
    return grpc::Status::OK;
  }

  grpc::Status LeaseJobs(grpc::ServerContext* ctx, const v1::LeaseJobsRequest* req,
                         v1::LeaseJobsResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckLeaseRequest(*req); !st.ok()) return st;
    absl::flat_hash_set<std::string> known(req->known_spec_hashes().begin(), req->known_spec_hashes().end());
    auto worker = state_->CachedWorker(req->worker_id(), /*touch=*/true);
    if (!worker.ok()) return ToGrpc(worker.status());
    LeaseRequest lr;
    lr.worker_id = req->worker_id();
    lr.max_jobs = req->max_jobs();
    lr.lease_ms = state_->options().lease_ms;
    lr.adapters = worker->adapters;
    lr.labels = worker->labels;
    auto start = Clock::now();
    auto jobs = LeaseWithWait(ctx, lr, req->wait_ms());
    if (!jobs.ok()) return ToGrpc(jobs.status());
    if (auto st = FillLeaseResponse(*jobs, known, resp); !st.ok()) return st;
    if (resp->jobs_size() > 0 && state_->metrics() != nullptr)
      state_->metrics()->LeaseServed(SecondsSince(start), resp->jobs_size());
    return grpc::Status::OK;
  }

  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                         v1::HeartbeatResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    auto worker = state_->CachedWorker(req->worker_id(), /*touch=*/false);
    if (!worker.ok()) return ToGrpc(worker.status());
    std::vector<HeartbeatJob> jobs;
    for (const auto& p : req->progress()) jobs.push_back({p.job_id(), p.lease_token()});
    auto hb = state_->store()->Heartbeat(req->worker_id(), jobs, state_->options().lease_ms);
    if (!hb.ok()) return ToGrpc(hb.status());
    for (int64_t id : hb->cancel) resp->add_cancel_job_ids(id);
    for (int64_t id : hb->lost) resp->add_lost_job_ids(id);
    SetTime(hb->extended_until, resp->mutable_leases_extended_until());
    return grpc::Status::OK;
  }

  grpc::Status CompleteJob(grpc::ServerContext* ctx, const v1::CompleteJobRequest* req,
                           v1::CompleteJobResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckId("job_id", req->job_id()); !st.ok()) return st;
    auto c = CompletionOf(*req);
    if (!c.ok()) return ToGrpc(c.status());
    auto res = state_->store()->CompleteJob(*c);
    if (!res.ok()) return ToGrpc(res.status());
    if (!res->duplicate && state_->metrics() != nullptr) state_->metrics()->JobCompleted(c->outcome, c->seconds);
    if (res->run_stopped && res->run_id != 0) state_->lease_pool().DropRun(res->run_id);
    resp->set_duplicate(res->duplicate);
    resp->set_run_stopped(res->run_stopped);
    resp->set_coverage_refused(res->coverage_refused);
    return grpc::Status::OK;
  }

 private:
  grpc::Status CheckLeaseRequest(const v1::LeaseJobsRequest& req) const {
    int64_t max_wait_ms = state_->options().max_wait_ms;
    if (req.max_jobs() < 1 || req.max_jobs() > kMaxLeaseBatch)
      return Invalid(absl::StrCat("max_jobs must be between 1 and ", kMaxLeaseBatch));
    if (req.wait_ms() < 0 || req.wait_ms() > max_wait_ms)
      return Invalid(absl::StrCat("wait_ms must be between 0 and ", max_wait_ms));
    if (req.known_spec_hashes_size() > kMaxKnownSpecHashes)
      return Invalid(absl::StrCat("known_spec_hashes lists more than ", kMaxKnownSpecHashes, " versions"));
    return grpc::Status::OK;
  }

  // Leases until a job comes, the request's wait ends, the call is
  // cancelled or the coordinator shuts down.
  absl::StatusOr<std::vector<LeasedJob>> LeaseWithWait(grpc::ServerContext* ctx, const LeaseRequest& lr,
                                                       int64_t wait_ms) {
    // Long-poll: try, then sleep until woken (Submit, requeue) or the
    // fallback poll, until a job comes or the wait ends.
    auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
      uint64_t seen = state_->WakeGeneration();
      LeasePool::LeaseOutcome pooled;
      auto got = state_->lease_pool().Lease(lr, &pooled);
      if (state_->metrics() != nullptr) state_->metrics()->LeasePoolServed(pooled.from_pool, pooled.held);
      if (!got.ok()) return got.status();
      if (!got->empty() || Clock::now() >= deadline || ctx->IsCancelled()) return got;
      auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(state_->options().lease_poll_ms));
      if (!state_->WaitForJobs(seen, until)) return got;  // shutting down
    }
  }

  // Puts `jobs` in `resp`, with their specs (only their hashes for those in
  // `known`) and targets, up to the response budget; leases past it are
  // given back.
  grpc::Status FillLeaseResponse(const std::vector<LeasedJob>& jobs, const absl::flat_hash_set<std::string>& known,
                                 v1::LeaseJobsResponse* resp) {
    size_t bytes = 0;
    std::vector<HeartbeatJob> unsent;  // leased, but past the response budget
    for (const LeasedJob& lj : jobs) {
      if (!unsent.empty()) {
        unsent.push_back({lj.job.id, lj.job.lease_token});
        continue;
      }
      v1::LeasedJob* p = resp->add_jobs();
      LeasedJobToProto(lj, p);
      // Specs and targets are immutable: read once, then from the cache.
      auto spec = state_->CachedSpec(lj.spec_hash);
      if (!spec.ok()) return ToGrpc(spec.status());
      *p->mutable_spec() = **spec;
      if (known.contains(lj.spec_hash)) p->mutable_spec()->clear_source();
      auto target = state_->CachedTarget(lj.target_id);
      if (!target.ok()) return ToGrpc(target.status());
      *p->mutable_target() = **target;
      AddRunCoverage(lj, p);
      size_t size = p->ByteSizeLong();
      if (resp->jobs_size() > 1 && bytes + size > kLeaseResponseBudget) {
        resp->mutable_jobs()->RemoveLast();
        unsent.push_back({lj.job.id, lj.job.lease_token});
        continue;
      }
      bytes += size;
    }
    if (!unsent.empty()) {
      // As if never leased; if this fails they expire and are leased again.
      (void)state_->store()->ReturnLeases(unsent);
      state_->Wake();
    }
    return grpc::Status::OK;
  }

  // A coverage-guided job gets what its run's completed jobs covered, so
  // that its guide seeks the rest. Coverage only steers generation: when
  // the store cannot say, the job starts from nothing, as before.
  void AddRunCoverage(const LeasedJob& lj, v1::LeasedJob* p) {
    if (lj.budget.guide_candidates <= 1) return;
    auto coverage = state_->store()->RunCoverage(lj.job.run_id);
    if (!coverage.ok() || coverage->spec_hash != lj.spec_hash) return;
    p->mutable_run_covered_branches()->Add(coverage->covered.begin(), coverage->covered.end());
  }

  // The store's Completion for a CompleteJob request.
  static absl::StatusOr<Completion> CompletionOf(const v1::CompleteJobRequest& req) {
    Completion c;
    c.job_id = req.job_id();
    c.lease_token = req.lease_token();
    c.worker_id = req.worker_id();
    c.outcome = req.outcome();
    if (!wire::IsKnown(c.outcome)) return absl::InvalidArgumentError("outcome is required");
    c.reason = req.reason();
    if (c.reason.size() > kMaxReasonBytes) c.reason.resize(kMaxReasonBytes);
    if (req.outcome() == v1::JOB_OUTCOME_FAILED) {
      if (!req.has_counterexample()) return absl::InvalidArgumentError("a failed job must send its counterexample");
      c.counterexample = CounterexampleFromProto(req.counterexample());
      if (!wire::IsKnown(c.counterexample->kind)) return absl::InvalidArgumentError("counterexample.kind is required");
    }
    c.seconds = req.seconds();
    c.sent = req.sent();
    c.received = req.received();
    if (req.faults() < 0) return absl::InvalidArgumentError("faults must not be negative");
    c.faults = req.faults();
    c.covered_branches.assign(req.covered_branches().begin(), req.covered_branches().end());
    return c;
  }
};

}  // namespace

std::unique_ptr<grpc::Service> MakeWorkerService(ServiceState* state) { return std::make_unique<WorkerService>(state); }

}  // namespace dualswarm::coord
