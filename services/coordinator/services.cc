#include "services/coordinator/services.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "dualswarm/v1/campaign.grpc.pb.h"
#include "dualswarm/v1/finding.grpc.pb.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "engine/lang/limits.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "services/coordinator/lease_pool.h"
#include "services/coordinator/metrics.h"
#include "services/coordinator/spec_check.h"

namespace dualswarm::coord {

namespace v1 = ::dualswarm::v1;

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- conversions

void SetTime(Micros us, google::protobuf::Timestamp* ts) {
  if (us == 0) return;
  int64_t secs = us / 1000000, rem = us % 1000000;
  if (rem < 0) {
    rem += 1000000;
    --secs;
  }
  ts->set_seconds(secs);
  ts->set_nanos(static_cast<int32_t>(rem * 1000));
}

v1::BranchOrder BranchOrderToProto(const std::string& s) {
  if (s == "first") return v1::BRANCH_ORDER_FIRST;
  if (s == "last") return v1::BRANCH_ORDER_LAST;
  if (s == "random") return v1::BRANCH_ORDER_RANDOM;
  if (s == "most-constrained") return v1::BRANCH_ORDER_MOST_CONSTRAINED;
  return v1::BRANCH_ORDER_UNSPECIFIED;
}

v1::VerdictKind KindToProto(const std::string& s) {
  if (s == "safety") return v1::VERDICT_KIND_SAFETY;
  if (s == "liveness") return v1::VERDICT_KIND_LIVENESS;
  if (s == "spec-error") return v1::VERDICT_KIND_SPEC_ERROR;
  if (s == "sut-crash") return v1::VERDICT_KIND_SUT_CRASH;
  return v1::VERDICT_KIND_UNSPECIFIED;
}

std::string KindFromProto(v1::VerdictKind k) {
  switch (k) {
    case v1::VERDICT_KIND_SAFETY: return "safety";
    case v1::VERDICT_KIND_LIVENESS: return "liveness";
    case v1::VERDICT_KIND_SPEC_ERROR: return "spec-error";
    case v1::VERDICT_KIND_SUT_CRASH: return "sut-crash";
    default: return "";
  }
}

v1::RunState RunStateToProto(const std::string& s) {
  if (s == "queued") return v1::RUN_STATE_QUEUED;
  if (s == "running") return v1::RUN_STATE_RUNNING;
  if (s == "passed") return v1::RUN_STATE_PASSED;
  if (s == "failed") return v1::RUN_STATE_FAILED;
  if (s == "cancelled") return v1::RUN_STATE_CANCELLED;
  if (s == "error") return v1::RUN_STATE_ERROR;
  return v1::RUN_STATE_UNSPECIFIED;
}

std::string RunStateFromProto(v1::RunState s) {
  switch (s) {
    case v1::RUN_STATE_QUEUED: return "queued";
    case v1::RUN_STATE_RUNNING: return "running";
    case v1::RUN_STATE_PASSED: return "passed";
    case v1::RUN_STATE_FAILED: return "failed";
    case v1::RUN_STATE_CANCELLED: return "cancelled";
    case v1::RUN_STATE_ERROR: return "error";
    default: return "";
  }
}

bool IsFinal(const std::string& run_state) {
  return run_state == "passed" || run_state == "failed" || run_state == "cancelled" ||
         run_state == "error";
}

void SpecToProto(const SpecRow& s, v1::Spec* p) {
  p->set_hash(s.hash);
  p->set_name(s.name);
  p->set_file_name(s.file_name);
  p->set_source(s.source);
  p->set_choice_sites(s.choice_sites);
  SetTime(s.created_at, p->mutable_created_at());
}

void TargetToProto(const TargetRow& t, v1::Target* p) {
  p->set_id(t.id);
  p->set_name(t.name);
  p->set_adapter(t.adapter);
  p->set_address(t.address);
  p->set_launch(t.launch);
  p->mutable_readiness()->set_probe(t.readiness_probe);
  p->mutable_readiness()->set_timeout_ms(t.readiness_timeout_ms);
  p->set_reset_policy(t.reset_policy == "none" ? v1::RESET_POLICY_NONE
                                               : v1::RESET_POLICY_RESTART_PER_JOB);
  for (const auto& l : t.labels) p->add_labels(l);
  SetTime(t.created_at, p->mutable_created_at());
}

void BudgetToProto(const JobBudget& b, v1::JobBudget* p) {
  p->set_steps(b.steps);
  p->set_time_budget_ms(b.time_budget_ms);
  p->set_connections(b.connections);
  p->set_max_in_flight(b.max_in_flight);
  p->set_response_timeout_ms(b.response_timeout_ms);
  p->set_network(b.network);
  p->set_max_frontier(b.max_frontier);
}

JobBudget BudgetFromProto(const v1::JobBudget& p) {
  JobBudget b;
  b.steps = p.steps();
  b.time_budget_ms = p.time_budget_ms();
  b.connections = p.connections();
  b.max_in_flight = p.max_in_flight();
  b.response_timeout_ms = p.response_timeout_ms();
  b.network = p.network();
  b.max_frontier = p.max_frontier();
  return b;
}

void TemplateToProto(const RunTemplate& t, v1::RunTemplate* p) {
  p->set_spec_hash(t.spec_hash);
  p->set_target_id(t.target_id);
  p->set_jobs(t.jobs);
  p->set_seed(t.seed);
  p->set_stop_at_first_finding(t.stop_at_first_finding);
  BudgetToProto(t.budget, p->mutable_budget());
  p->set_gen(t.gen);
}

RunTemplate TemplateFromProto(const v1::RunTemplate& p) {
  RunTemplate t;
  t.spec_hash = p.spec_hash();
  t.target_id = p.target_id();
  t.jobs = p.jobs();
  t.seed = p.seed();
  t.stop_at_first_finding = p.stop_at_first_finding();
  t.budget = BudgetFromProto(p.budget());
  t.gen = p.gen();
  return t;
}

void CampaignToProto(const CampaignRow& c, v1::Campaign* p) {
  p->set_id(c.id);
  p->set_name(c.name);
  p->set_cron(c.cron);
  TemplateToProto(c.tmpl, p->mutable_template_());
  p->set_paused(c.paused);
  SetTime(c.created_at, p->mutable_created_at());
  if (c.last_fired_at != 0) SetTime(c.last_fired_at, p->mutable_last_fired_at());
  p->set_last_run_id(c.last_run_id);
  p->set_spec_name(c.spec_name);
  if (c.next_fire_at != 0) SetTime(c.next_fire_at, p->mutable_next_fire_at());
  p->set_last_error(c.last_error);
}

Micros NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void RunToProto(const RunRow& r, v1::Run* p) {
  p->set_id(r.id);
  TemplateToProto(r.tmpl, p->mutable_template_());
  p->set_state(RunStateToProto(r.state));
  v1::JobCounts* c = p->mutable_counts();
  c->set_queued(r.counts.queued);
  c->set_leased(r.counts.leased);
  c->set_passed(r.counts.passed);
  c->set_failed(r.counts.failed);
  c->set_error(r.counts.error);
  c->set_cancelled(r.counts.cancelled);
  c->set_total(r.counts.total);
  p->set_findings(r.counts.failed);
  p->set_error(r.error);
  p->set_submitted_by(r.submitted_by);
  p->set_campaign_id(r.campaign_id);
  SetTime(r.created_at, p->mutable_created_at());
  // Unset while queued / not finished: mutable_*() alone would send 1970-01-01.
  if (r.started_at != 0) SetTime(r.started_at, p->mutable_started_at());
  if (r.finished_at != 0) SetTime(r.finished_at, p->mutable_finished_at());
}

std::string JobStateFromProto(v1::JobState s) {
  switch (s) {
    case v1::JOB_STATE_QUEUED: return "queued";
    case v1::JOB_STATE_LEASED: return "leased";
    case v1::JOB_STATE_PASSED: return "passed";
    case v1::JOB_STATE_FAILED: return "failed";
    case v1::JOB_STATE_ERROR: return "error";
    case v1::JOB_STATE_CANCELLED: return "cancelled";
    default: return "";
  }
}

v1::JobState JobStateToProto(const std::string& s) {
  for (int i = v1::JOB_STATE_QUEUED; i <= v1::JOB_STATE_CANCELLED; ++i)
    if (JobStateFromProto(static_cast<v1::JobState>(i)) == s) return static_cast<v1::JobState>(i);
  return v1::JOB_STATE_UNSPECIFIED;
}

void JobToProto(const JobRow& j, v1::Job* p) {
  p->set_id(j.id);
  p->set_run_id(j.run_id);
  p->set_index(j.index);
  p->set_seed(j.seed);
  p->set_branch_order(BranchOrderToProto(j.branch_order));
  p->set_feature_mask(j.feature_mask);
  p->set_state(JobStateToProto(j.state));
  p->set_attempts(j.attempts);
  p->set_worker_id(j.worker_id);
  p->set_outcome(j.outcome);
  p->set_reason(j.reason);
  if (j.state == "leased" && j.lease_expires_at != 0)
    SetTime(j.lease_expires_at, p->mutable_lease_expires_at());
  if (j.updated_at != 0) SetTime(j.updated_at, p->mutable_updated_at());
}

void FindingToProto(const FindingRow& f, v1::Finding* p) {
  p->set_id(f.id);
  p->set_signature(f.signature);
  p->set_kind(KindToProto(f.kind));
  p->set_spec_hash(f.spec_hash);
  p->set_target_id(f.target_id);
  p->set_reason(f.reason);
  p->set_count(f.count);
  SetTime(f.first_seen, p->mutable_first_seen());
  SetTime(f.last_seen, p->mutable_last_seen());
  p->set_smallest_counterexample_id(f.smallest_counterexample_id);
}

void CounterexampleToProto(const CounterexampleRow& c, v1::Counterexample* p) {
  p->set_id(c.id);
  p->set_finding_id(c.finding_id);
  p->set_run_id(c.run_id);
  p->set_job_id(c.job_id);
  p->set_spec_hash(c.spec_hash);
  p->set_target_id(c.target_id);
  p->set_seed(c.seed);
  p->set_branch_order(BranchOrderToProto(c.branch_order));
  p->set_feature_mask(c.feature_mask);
  p->set_kind(KindToProto(c.cx.kind));
  p->set_reason(c.cx.reason);
  p->set_diff(c.cx.diff);
  p->set_signature(c.cx.signature);
  p->set_input_json(c.cx.input_json);
  p->set_trace_json(c.cx.trace_json);
  p->set_size(c.cx.size);
  p->set_unshrunk_size(c.cx.unshrunk_size);
  p->set_document_json(c.cx.document_json);
  SetTime(c.created_at, p->mutable_created_at());
}

Page PageOf(int32_t size, const std::string& token) {
  Page p;
  p.size = size;
  p.after = token;
  return p;
}

grpc::Status Invalid(const std::string& msg) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, msg);
}

grpc::Status CheckPageSize(int32_t size) {
  if (size < 0 || size > 500) return Invalid("page_size must be between 0 and 500");
  return grpc::Status::OK;
}

grpc::Status CheckId(const char* what, int64_t id) {
  if (id <= 0) return Invalid(absl::StrCat(what, " must be a positive id"));
  return grpc::Status::OK;
}

// The checks a spec upload passes before it is loaded (Create, Validate):
// size, and no NUL anywhere (the store keeps text as C strings) nor line
// breaks in the file name.
grpc::Status CheckSpecRequest(const std::string& source, const std::string& file_name) {
  if (source.size() > lang::kMaxSpecSourceBytes) return Invalid(lang::kSpecSourceTooLarge);
  if (file_name.size() > 255) return Invalid("file_name exceeds 255 bytes");
  if (auto st = CheckText("source", source, false); !st.ok()) return ToGrpc(st);
  if (auto st = CheckText("file_name", file_name, true); !st.ok()) return ToGrpc(st);
  return grpc::Status::OK;
}
// A LeaseJobs response stops adding jobs at this size (it always carries
// one): far below what workers and the CLI accept (64 MiB), so a batch of
// jobs with large specs never makes a response nobody can read.
constexpr size_t kLeaseResponseBudget = 8 << 20;
constexpr int kMaxKnownSpecHashes = 256;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

// ---------------------------------------------------------------- auth

struct Caller {
  std::string role;
  std::string name;
};

struct CoordinatorServices::Impl {
  Store* store;
  ServiceOptions options;
  CoordinatorMetrics* metrics;  // may be null

  // ------------------------------------------------------------ caches
  // Spec versions, targets and registered workers never change, so the
  // rows a lease needs are read from the database once (bounded: the whole
  // cache is dropped when it grows too big). Valid tokens are remembered for
  // options.token_cache_ms.
  struct TokenEntry {
    Caller caller;
    Clock::time_point expires;
  };
  struct WorkerEntry {
    WorkerInfo info;
    Clock::time_point touched;  // last TouchWorker by this replica
  };
  static constexpr size_t kMaxCachedSpecBytes = 64 << 20;
  static constexpr size_t kMaxCachedEntries = 10000;
  std::mutex cache_mu;
  std::unordered_map<std::string, std::shared_ptr<const v1::Spec>> spec_cache;
  size_t spec_cache_bytes = 0;
  std::unordered_map<int64_t, std::shared_ptr<const v1::Target>> target_cache;
  std::unordered_map<std::string, WorkerEntry> worker_cache;
  std::unordered_map<std::string, TokenEntry> token_cache;

  absl::StatusOr<std::shared_ptr<const v1::Spec>> CachedSpec(const std::string& hash) {
    {
      std::lock_guard<std::mutex> lock(cache_mu);
      auto it = spec_cache.find(hash);
      if (it != spec_cache.end()) return it->second;
    }
    auto row = store->GetSpec(hash);
    if (!row.ok()) return row.status();
    auto proto = std::make_shared<v1::Spec>();
    SpecToProto(*row, proto.get());
    std::lock_guard<std::mutex> lock(cache_mu);
    if (spec_cache_bytes + row->source.size() > kMaxCachedSpecBytes) {
      spec_cache.clear();
      spec_cache_bytes = 0;
    }
    if (spec_cache.emplace(hash, proto).second) spec_cache_bytes += row->source.size();
    return std::shared_ptr<const v1::Spec>(proto);
  }

  absl::StatusOr<std::shared_ptr<const v1::Target>> CachedTarget(int64_t id) {
    {
      std::lock_guard<std::mutex> lock(cache_mu);
      auto it = target_cache.find(id);
      if (it != target_cache.end()) return it->second;
    }
    auto row = store->GetTarget(id);
    if (!row.ok()) return row.status();
    auto proto = std::make_shared<v1::Target>();
    TargetToProto(*row, proto.get());
    std::lock_guard<std::mutex> lock(cache_mu);
    if (target_cache.size() >= kMaxCachedEntries) target_cache.clear();
    target_cache.emplace(id, proto);
    return std::shared_ptr<const v1::Target>(proto);
  }

  // A registered worker. With `touch`, also records it as seen in the
  // database (for dualswarm_workers_alive), at most every lease_ms/3.
  absl::StatusOr<WorkerInfo> CachedWorker(const std::string& id, bool touch) {
    auto now = Clock::now();
    auto every = milliseconds(std::clamp<int64_t>(options.lease_ms / 3, 50, 10000));
    std::optional<WorkerInfo> hit;
    bool touch_now = false;
    {
      std::lock_guard<std::mutex> lock(cache_mu);
      auto it = worker_cache.find(id);
      if (it != worker_cache.end()) {
        hit = it->second.info;
        if (touch && now - it->second.touched >= every) {
          it->second.touched = now;
          touch_now = true;
        }
      }
    }
    if (hit.has_value()) {
      if (touch_now) (void)store->TouchWorker(id);  // best effort: only the metric depends on it
      return *hit;
    }
    auto info = store->GetWorker(id);
    if (!info.ok()) return info.status();
    if (touch) (void)store->TouchWorker(id);
    std::lock_guard<std::mutex> lock(cache_mu);
    if (worker_cache.size() >= kMaxCachedEntries) worker_cache.clear();
    worker_cache[id] = WorkerEntry{*info, now};
    return *info;
  }

  // ------------------------------------------------------------ long-poll
  // LeaseJobs waits here between lease attempts. Submit and the requeuer
  // (NotifyJobsAvailable) wake every waiter at once; jobs made available by
  // another replica or by a lease running out are found by the fallback
  // poll every options.lease_poll_ms.
  std::mutex wake_mu;
  std::condition_variable wake_cv;
  uint64_t wake_generation = 0;
  bool stopping = false;

  uint64_t WakeGeneration() {
    std::lock_guard<std::mutex> lock(wake_mu);
    return wake_generation;
  }

  void Wake() {
    {
      std::lock_guard<std::mutex> lock(wake_mu);
      ++wake_generation;
    }
    wake_cv.notify_all();
  }

  // Waits until a wake-up newer than `seen` or `until`; false once stopping.
  bool WaitForJobs(uint64_t seen, Clock::time_point until) {
    std::unique_lock<std::mutex> lock(wake_mu);
    wake_cv.wait_until(lock, until, [&] { return stopping || wake_generation != seen; });
    return !stopping;
  }

  // Authenticates the caller and checks that its role is one of `roles`
  // (admin may always call).
  grpc::Status Authorize(grpc::ServerContext* ctx, std::initializer_list<const char*> roles,
                         Caller* caller) {
    if (!options.require_auth) {
      *caller = {"admin", "anonymous"};
      return grpc::Status::OK;
    }
    const auto& md = ctx->client_metadata();
    auto it = md.find("authorization");
    if (it == md.end())
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "missing bearer token (metadata \"authorization: Bearer TOKEN\")");
    std::string value(it->second.data(), it->second.size());
    std::string token;
    if (absl::StartsWithIgnoreCase(value, "bearer "))
      token = std::string(absl::StripAsciiWhitespace(value.substr(7)));
    if (token.empty())
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "malformed authorization metadata");
    bool cached = false;
    {
      std::lock_guard<std::mutex> lock(cache_mu);
      auto hit = token_cache.find(token);
      if (hit != token_cache.end() && hit->second.expires > Clock::now()) {
        *caller = hit->second.caller;
        cached = true;
      }
    }
    if (!cached) {
      auto who = store->Authenticate(token);
      if (!who.ok()) return ToGrpc(who.status());
      caller->role = who->first;
      caller->name = who->second;
      std::lock_guard<std::mutex> lock(cache_mu);
      if (token_cache.size() >= kMaxCachedEntries) token_cache.clear();
      token_cache[token] = {*caller, Clock::now() + milliseconds(options.token_cache_ms)};
    }
    if (caller->role == "admin") return grpc::Status::OK;
    for (const char* r : roles)
      if (caller->role == r) return grpc::Status::OK;
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("role \"", caller->role, "\" may not call this method"));
  }

  // ------------------------------------------------------------ SpecService
  class Specs final : public v1::SpecService::Service {
   public:
    explicit Specs(Impl* impl) : impl_(impl) {}

    grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateSpecRequest* req,
                        v1::CreateSpecResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckSpecRequest(req->source(), req->file_name()); !st.ok()) return st;
      std::string file = req->file_name().empty() ? "spec.dspec" : req->file_name();
      SpecCheck check = CheckSpec(file, req->source());
      if (!check.valid) return Invalid(absl::StrCat("the spec does not load:\n", check.ErrorText()));
      bool created = false;
      auto row =
          impl_->store->PutSpec(check.name, file, req->source(), check.choice_sites, &created, check.gens);
      if (!row.ok()) return ToGrpc(row.status());
      SpecToProto(*row, resp->mutable_spec());
      resp->mutable_spec()->clear_source();
      resp->set_created(created);
      return grpc::Status::OK;
    }

    grpc::Status Get(grpc::ServerContext* ctx, const v1::GetSpecRequest* req,
                     v1::Spec* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (req->hash().empty() == req->name().empty())
        return Invalid("give exactly one of hash and name");
      auto row = req->hash().empty() ? impl_->store->GetLatestSpec(req->name())
                                     : impl_->store->GetSpec(req->hash());
      if (!row.ok()) return ToGrpc(row.status());
      SpecToProto(*row, resp);
      return grpc::Status::OK;
    }

    grpc::Status List(grpc::ServerContext* ctx, const v1::ListSpecsRequest* req,
                      v1::ListSpecsResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
      auto list = impl_->store->ListSpecs(req->name(), PageOf(req->page_size(), req->page_token()));
      if (!list.ok()) return ToGrpc(list.status());
      for (const auto& s : list->items) SpecToProto(s, resp->add_specs());
      resp->set_next_page_token(list->next);
      return grpc::Status::OK;
    }

    grpc::Status Validate(grpc::ServerContext* ctx, const v1::ValidateSpecRequest* req,
                          v1::ValidateSpecResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckSpecRequest(req->source(), req->file_name()); !st.ok()) return st;
      std::string file = req->file_name().empty() ? "spec.dspec" : req->file_name();
      SpecCheck check = CheckSpec(file, req->source());
      resp->set_valid(check.valid);
      for (const auto& e : check.errors) {
        v1::SpecError* pe = resp->add_errors();
        pe->set_file(e.file);
        pe->set_line(e.line);
        pe->set_column(e.column);
        pe->set_message(e.message);
      }
      if (check.valid) {
        resp->set_name(check.name);
        resp->set_hash(Sha256Hex(req->source()));
        resp->set_choice_sites(check.choice_sites);
      }
      return grpc::Status::OK;
    }

   private:
    Impl* impl_;
  };

  // ------------------------------------------------------------ TargetService
  class Targets final : public v1::TargetService::Service {
   public:
    explicit Targets(Impl* impl) : impl_(impl) {}

    grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateTargetRequest* req,
                        v1::Target* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {}, &caller); !st.ok()) return st;  // admin only
      const v1::Target& p = req->target();
      TargetRow t;
      t.name = p.name();
      t.adapter = p.adapter();
      t.address = p.address();
      t.launch = p.launch();
      t.readiness_probe = p.readiness().probe();
      t.readiness_timeout_ms = p.readiness().timeout_ms();
      t.reset_policy = p.reset_policy() == v1::RESET_POLICY_NONE              ? "none"
                       : p.reset_policy() == v1::RESET_POLICY_RESTART_PER_JOB ? "restart-per-job"
                                                                              : "";
      t.labels.assign(p.labels().begin(), p.labels().end());
      auto row = impl_->store->CreateTarget(t);
      if (!row.ok()) return ToGrpc(row.status());
      TargetToProto(*row, resp);
      return grpc::Status::OK;
    }

    grpc::Status Get(grpc::ServerContext* ctx, const v1::GetTargetRequest* req,
                     v1::Target* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if ((req->id() == 0) == req->name().empty()) return Invalid("give exactly one of id and name");
      if (req->id() < 0) return Invalid("id must be positive");
      auto row = req->id() != 0 ? impl_->store->GetTarget(req->id())
                                : impl_->store->GetTargetByName(req->name());
      if (!row.ok()) return ToGrpc(row.status());
      TargetToProto(*row, resp);
      return grpc::Status::OK;
    }

    grpc::Status List(grpc::ServerContext* ctx, const v1::ListTargetsRequest* req,
                      v1::ListTargetsResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
      auto list = impl_->store->ListTargets(PageOf(req->page_size(), req->page_token()));
      if (!list.ok()) return ToGrpc(list.status());
      for (const auto& t : list->items) TargetToProto(t, resp->add_targets());
      resp->set_next_page_token(list->next);
      return grpc::Status::OK;
    }

   private:
    Impl* impl_;
  };

  // ------------------------------------------------------------ RunService
  class Runs final : public v1::RunService::Service {
   public:
    explicit Runs(Impl* impl) : impl_(impl) {}

    grpc::Status Submit(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req,
                        v1::Run* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      const v1::RunTemplate& p = req->template_();
      if (p.spec_hash().empty()) return Invalid("template.spec_hash is required");
      if (auto st = CheckId("template.target_id", p.target_id()); !st.ok()) return st;
      RunTemplate t;
      t.spec_hash = p.spec_hash();
      t.target_id = p.target_id();
      t.jobs = p.jobs();
      t.seed = p.seed();
      t.stop_at_first_finding = p.stop_at_first_finding();
      t.budget = BudgetFromProto(p.budget());
      t.gen = p.gen();
      auto run = impl_->store->SubmitRun(t, caller.name);
      if (!run.ok()) return ToGrpc(run.status());
      impl_->Wake();
      RunToProto(*run, resp);
      return grpc::Status::OK;
    }

    grpc::Status Get(grpc::ServerContext* ctx, const v1::GetRunRequest* req, v1::Run* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckId("id", req->id()); !st.ok()) return st;
      auto run = impl_->store->GetRun(req->id());
      if (!run.ok()) return ToGrpc(run.status());
      RunToProto(*run, resp);
      return grpc::Status::OK;
    }

    grpc::Status List(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                      v1::ListRunsResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
      if (req->target_id() < 0) return Invalid("target_id must not be negative");
      RunFilter f;
      f.state = RunStateFromProto(req->state());
      if (f.state.empty() && req->state() != v1::RUN_STATE_UNSPECIFIED)
        return Invalid(absl::StrCat("unknown run state ", static_cast<int>(req->state())));
      f.spec_hash = req->spec_hash();
      f.target_id = req->target_id();
      auto list = impl_->store->ListRuns(f, PageOf(req->page_size(), req->page_token()));
      if (!list.ok()) return ToGrpc(list.status());
      for (const auto& r : list->items) RunToProto(r, resp->add_runs());
      resp->set_next_page_token(list->next);
      return grpc::Status::OK;
    }

    grpc::Status Cancel(grpc::ServerContext* ctx, const v1::CancelRunRequest* req,
                        v1::Run* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckId("id", req->id()); !st.ok()) return st;
      auto run = impl_->store->CancelRun(req->id());
      if (!run.ok()) return ToGrpc(run.status());
      impl_->lease_pool.DropRun(req->id());
      RunToProto(*run, resp);
      return grpc::Status::OK;
    }

    grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                       grpc::ServerWriter<v1::RunEvent>* writer) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckId("id", req->id()); !st.ok()) return st;
      std::string last;
      while (!ctx->IsCancelled()) {
        auto run = impl_->store->GetRun(req->id());
        if (!run.ok()) {
          // A database outage is waited out; anything else ends the stream.
          if (!absl::IsUnavailable(run.status())) return ToGrpc(run.status());
        } else {
          v1::RunEvent ev;
          RunToProto(*run, ev.mutable_run());
          ev.set_final(IsFinal(run->state));
          std::string now = ev.SerializeAsString();
          if (now != last) {
            if (!writer->Write(ev)) return grpc::Status::OK;  // the client went away
            last = now;
          }
          if (ev.final()) return grpc::Status::OK;
        }
        std::this_thread::sleep_for(milliseconds(impl_->options.watch_poll_ms));
      }
      return grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled");
    }

    grpc::Status ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req,
                          v1::ListJobsResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckId("run_id", req->run_id()); !st.ok()) return st;
      if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
      std::string state = JobStateFromProto(req->state());
      if (state.empty() && req->state() != v1::JOB_STATE_UNSPECIFIED)
        return Invalid(absl::StrCat("unknown job state ", static_cast<int>(req->state())));
      auto list = impl_->store->ListRunJobs(req->run_id(), state,
                                            PageOf(req->page_size(), req->page_token()));
      if (!list.ok()) return ToGrpc(list.status());
      for (const auto& j : list->items) JobToProto(j, resp->add_jobs());
      resp->set_next_page_token(list->next);
      return grpc::Status::OK;
    }

   private:
    Impl* impl_;
  };

  // ------------------------------------------------------------ FindingService
  class Findings final : public v1::FindingService::Service {
   public:
    explicit Findings(Impl* impl) : impl_(impl) {}

    grpc::Status List(grpc::ServerContext* ctx, const v1::ListFindingsRequest* req,
                      v1::ListFindingsResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
      if (req->target_id() < 0 || req->run_id() < 0) return Invalid("ids must not be negative");
      auto list = impl_->store->ListFindings(req->spec_hash(), req->target_id(), req->run_id(),
                                             PageOf(req->page_size(), req->page_token()));
      if (!list.ok()) return ToGrpc(list.status());
      for (const auto& f : list->items) FindingToProto(f, resp->add_findings());
      resp->set_next_page_token(list->next);
      return grpc::Status::OK;
    }

    grpc::Status Get(grpc::ServerContext* ctx, const v1::GetFindingRequest* req,
                     v1::Finding* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckId("id", req->id()); !st.ok()) return st;
      if (req->max_counterexamples() < 0 || req->max_counterexamples() > 100)
        return Invalid("max_counterexamples must be between 0 and 100");
      auto f = impl_->store->GetFinding(req->id());
      if (!f.ok()) return ToGrpc(f.status());
      FindingToProto(*f, resp);
      auto cxs = impl_->store->ListCounterexamples(req->id(), req->max_counterexamples());
      if (!cxs.ok()) return ToGrpc(cxs.status());
      for (const auto& c : *cxs) CounterexampleToProto(c, resp->add_counterexamples());
      return grpc::Status::OK;
    }

   private:
    Impl* impl_;
  };

  // ------------------------------------------------------------ WorkerService
  class Workers final : public v1::WorkerService::Service {
   public:
    explicit Workers(Impl* impl) : impl_(impl) {}

    grpc::Status Register(grpc::ServerContext* ctx, const v1::RegisterWorkerRequest* req,
                          v1::RegisterWorkerResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"worker"}, &caller); !st.ok()) return st;
      WorkerInfo info;
      info.name = req->name();
      info.slots = req->slots();
      info.adapters.assign(req->adapters().begin(), req->adapters().end());
      info.labels.assign(req->labels().begin(), req->labels().end());
      info.version = req->version();
      auto id = impl_->store->RegisterWorker(info);
      if (!id.ok()) return ToGrpc(id.status());
      resp->set_worker_id(*id);
      resp->set_lease_duration_ms(static_cast<int32_t>(impl_->options.lease_ms));
      resp->set_heartbeat_interval_ms(static_cast<int32_t>(std::max<int64_t>(impl_->options.lease_ms / 3, 50)));
      return grpc::Status::OK;
    }

    grpc::Status LeaseJobs(grpc::ServerContext* ctx, const v1::LeaseJobsRequest* req,
                           v1::LeaseJobsResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"worker"}, &caller); !st.ok()) return st;
      if (req->max_jobs() < 1 || req->max_jobs() > kMaxLeaseBatch)
        return Invalid(absl::StrCat("max_jobs must be between 1 and ", kMaxLeaseBatch));
      if (req->wait_ms() < 0 || req->wait_ms() > impl_->options.max_wait_ms)
        return Invalid(absl::StrCat("wait_ms must be between 0 and ", impl_->options.max_wait_ms));
      if (req->known_spec_hashes_size() > kMaxKnownSpecHashes)
        return Invalid(absl::StrCat("known_spec_hashes lists more than ", kMaxKnownSpecHashes, " versions"));
      absl::flat_hash_set<std::string> known(req->known_spec_hashes().begin(), req->known_spec_hashes().end());
      auto worker = impl_->CachedWorker(req->worker_id(), /*touch=*/true);
      if (!worker.ok()) return ToGrpc(worker.status());
      LeaseRequest lr;
      lr.worker_id = req->worker_id();
      lr.max_jobs = req->max_jobs();
      lr.lease_ms = impl_->options.lease_ms;
      lr.adapters = worker->adapters;
      lr.labels = worker->labels;
      // Long-poll: try, then sleep until woken (Submit, requeue) or the
      // fallback poll, until a job comes or the wait ends.
      auto start = Clock::now();
      auto deadline = start + milliseconds(req->wait_ms());
      std::vector<LeasedJob> jobs;
      for (;;) {
        uint64_t seen = impl_->WakeGeneration();
        LeasePool::LeaseOutcome pooled;
        auto got = impl_->lease_pool.Lease(lr, &pooled);
        if (impl_->metrics != nullptr) impl_->metrics->LeasePoolServed(pooled.from_pool, pooled.held);
        if (!got.ok()) return ToGrpc(got.status());
        jobs = std::move(*got);
        if (!jobs.empty() || Clock::now() >= deadline || ctx->IsCancelled()) break;
        auto until = std::min(deadline, Clock::now() + milliseconds(impl_->options.lease_poll_ms));
        if (!impl_->WaitForJobs(seen, until)) break;  // shutting down
      }
      size_t bytes = 0;
      std::vector<HeartbeatJob> unsent;  // leased, but past the response budget
      for (const LeasedJob& lj : jobs) {
        if (!unsent.empty()) {
          unsent.push_back({lj.job.id, lj.job.lease_token});
          continue;
        }
        v1::LeasedJob* p = resp->add_jobs();
        p->set_job_id(lj.job.id);
        p->set_run_id(lj.job.run_id);
        p->set_index(lj.job.index);
        p->set_lease_token(lj.job.lease_token);
        SetTime(lj.job.lease_expires_at, p->mutable_lease_expires_at());
        p->set_attempt(lj.job.attempts);
        p->set_seed(lj.job.seed);
        p->set_branch_order(BranchOrderToProto(lj.job.branch_order));
        p->set_feature_mask(lj.job.feature_mask);
        BudgetToProto(lj.budget, p->mutable_budget());
        p->set_gen(lj.gen);
        // Specs and targets are immutable: read once, then from the cache.
        auto spec = impl_->CachedSpec(lj.spec_hash);
        if (!spec.ok()) return ToGrpc(spec.status());
        *p->mutable_spec() = **spec;
        if (known.contains(lj.spec_hash)) p->mutable_spec()->clear_source();
        auto target = impl_->CachedTarget(lj.target_id);
        if (!target.ok()) return ToGrpc(target.status());
        *p->mutable_target() = **target;
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
        (void)impl_->store->ReturnLeases(unsent);
        impl_->Wake();
      }
      if (resp->jobs_size() > 0 && impl_->metrics != nullptr)
        impl_->metrics->LeaseServed(SecondsSince(start), resp->jobs_size());
      return grpc::Status::OK;
    }

    grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                           v1::HeartbeatResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"worker"}, &caller); !st.ok()) return st;
      auto worker = impl_->CachedWorker(req->worker_id(), /*touch=*/false);
      if (!worker.ok()) return ToGrpc(worker.status());
      std::vector<HeartbeatJob> jobs;
      for (const auto& p : req->progress()) jobs.push_back({p.job_id(), p.lease_token()});
      auto hb = impl_->store->Heartbeat(req->worker_id(), jobs, impl_->options.lease_ms);
      if (!hb.ok()) return ToGrpc(hb.status());
      for (int64_t id : hb->cancel) resp->add_cancel_job_ids(id);
      for (int64_t id : hb->lost) resp->add_lost_job_ids(id);
      SetTime(hb->extended_until, resp->mutable_leases_extended_until());
      return grpc::Status::OK;
    }

    grpc::Status CompleteJob(grpc::ServerContext* ctx, const v1::CompleteJobRequest* req,
                             v1::CompleteJobResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"worker"}, &caller); !st.ok()) return st;
      if (auto st = CheckId("job_id", req->job_id()); !st.ok()) return st;
      Completion c;
      c.job_id = req->job_id();
      c.lease_token = req->lease_token();
      c.worker_id = req->worker_id();
      switch (req->outcome()) {
        case v1::JOB_OUTCOME_PASSED: c.outcome = "passed"; break;
        case v1::JOB_OUTCOME_FAILED: c.outcome = "failed"; break;
        case v1::JOB_OUTCOME_INCONCLUSIVE: c.outcome = "inconclusive"; break;
        case v1::JOB_OUTCOME_ERROR: c.outcome = "error"; break;
        default: return Invalid("outcome is required");
      }
      c.reason = req->reason();
      if (c.reason.size() > 65536) c.reason.resize(65536);
      if (req->outcome() == v1::JOB_OUTCOME_FAILED) {
        if (!req->has_counterexample()) return Invalid("a failed job must send its counterexample");
        const v1::Counterexample& p = req->counterexample();
        NewCounterexample cx;
        cx.kind = KindFromProto(p.kind());
        if (cx.kind.empty()) return Invalid("counterexample.kind is required");
        cx.reason = p.reason();
        cx.diff = p.diff();
        cx.signature = p.signature();
        cx.input_json = p.input_json();
        cx.trace_json = p.trace_json();
        cx.size = p.size();
        cx.unshrunk_size = p.unshrunk_size();
        cx.document_json = p.document_json();
        c.counterexample = cx;
      }
      c.seconds = req->seconds();
      c.sent = req->sent();
      c.received = req->received();
      auto res = impl_->store->CompleteJob(c);
      if (!res.ok()) return ToGrpc(res.status());
      if (!res->duplicate && impl_->metrics != nullptr)
        impl_->metrics->JobCompleted(c.outcome, c.seconds, c.outcome == "failed");
      if (res->run_stopped && res->run_id != 0) impl_->lease_pool.DropRun(res->run_id);
      resp->set_duplicate(res->duplicate);
      resp->set_run_stopped(res->run_stopped);
      return grpc::Status::OK;
    }

   private:
    Impl* impl_;
  };

  // ------------------------------------------------------------ CampaignService
  // Submitters manage campaigns like runs (a campaign only submits runs its
  // creator could submit; targets, which say what a worker executes, stay
  // admin-only).
  class Campaigns final : public v1::CampaignService::Service {
   public:
    explicit Campaigns(Impl* impl) : impl_(impl) {}

    grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateCampaignRequest* req,
                        v1::Campaign* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      const v1::Campaign& p = req->campaign();
      if (p.cron().size() > 1000) return Invalid("cron exceeds 1000 bytes");
      if (auto st = CheckId("campaign.template.target_id", p.template_().target_id()); !st.ok())
        return st;
      CampaignRow c;
      c.name = p.name();
      c.cron = p.cron();
      c.tmpl = TemplateFromProto(p.template_());
      c.spec_name = p.spec_name();
      c.paused = p.paused();
      auto row = impl_->store->CreateCampaign(c, NowMicros());
      if (!row.ok()) return ToGrpc(row.status());
      CampaignToProto(*row, resp);
      return grpc::Status::OK;
    }

    grpc::Status List(grpc::ServerContext* ctx, const v1::ListCampaignsRequest* req,
                      v1::ListCampaignsResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
      auto list = impl_->store->ListCampaigns(PageOf(req->page_size(), req->page_token()));
      if (!list.ok()) return ToGrpc(list.status());
      for (const auto& c : list->items) CampaignToProto(c, resp->add_campaigns());
      resp->set_next_page_token(list->next);
      return grpc::Status::OK;
    }

    grpc::Status Get(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                     v1::Campaign* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckIdOrName(req->id(), req->name()); !st.ok()) return st;
      auto row = req->id() != 0 ? impl_->store->GetCampaign(req->id())
                                : impl_->store->GetCampaignByName(req->name());
      if (!row.ok()) return ToGrpc(row.status());
      CampaignToProto(*row, resp);
      return grpc::Status::OK;
    }

    grpc::Status Pause(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                       v1::Campaign* resp) override {
      return SetPaused(ctx, req, true, resp);
    }

    grpc::Status Resume(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                        v1::Campaign* resp) override {
      return SetPaused(ctx, req, false, resp);
    }

    grpc::Status Delete(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                        v1::DeleteCampaignResponse*) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      auto id = Resolve(req->id(), req->name());
      if (!id.ok()) return ToGrpc(id.status());
      return ToGrpc(impl_->store->DeleteCampaign(*id));
    }

    grpc::Status ListRuns(grpc::ServerContext* ctx, const v1::ListCampaignRunsRequest* req,
                          v1::ListCampaignRunsResponse* resp) override {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
      auto id = Resolve(req->id(), req->name());
      if (!id.ok()) return ToGrpc(id.status());
      auto list = impl_->store->ListCampaignRuns(*id, PageOf(req->page_size(), req->page_token()));
      if (!list.ok()) return ToGrpc(list.status());
      for (const auto& r : list->items) {
        v1::CampaignRun* p = resp->add_runs();
        RunToProto(r.run, p->mutable_run());
        p->set_previous_run_id(r.previous_run_id);
        for (int64_t f : r.finding_ids) p->add_finding_ids(f);
        for (int64_t f : r.new_finding_ids) p->add_new_finding_ids(f);
        for (int64_t f : r.gone_finding_ids) p->add_gone_finding_ids(f);
      }
      resp->set_next_page_token(list->next);
      return grpc::Status::OK;
    }

   private:
    static grpc::Status CheckIdOrName(int64_t id, const std::string& name) {
      if ((id == 0) == name.empty()) return Invalid("give exactly one of id and name");
      if (id < 0) return Invalid("id must be positive");
      return grpc::Status::OK;
    }

    // The id of the campaign named by id or name.
    absl::StatusOr<int64_t> Resolve(int64_t id, const std::string& name) {
      if ((id == 0) == name.empty()) return absl::InvalidArgumentError("give exactly one of id and name");
      if (id < 0) return absl::InvalidArgumentError("id must be positive");
      if (id != 0) return id;
      auto row = impl_->store->GetCampaignByName(name);
      if (!row.ok()) return row.status();
      return row->id;
    }

    grpc::Status SetPaused(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, bool paused,
                           v1::Campaign* resp) {
      Caller caller;
      if (auto st = impl_->Authorize(ctx, {"submitter"}, &caller); !st.ok()) return st;
      auto id = Resolve(req->id(), req->name());
      if (!id.ok()) return ToGrpc(id.status());
      auto row = impl_->store->SetCampaignPaused(*id, paused, NowMicros());
      if (!row.ok()) return ToGrpc(row.status());
      CampaignToProto(*row, resp);
      return grpc::Status::OK;
    }

    Impl* impl_;
  };

  Impl(Store* s, ServiceOptions o)
      : store(s),
        options(o),
        metrics(o.metrics),
        specs(this),
        targets(this),
        runs(this),
        findings(this),
        workers(this),
        campaigns(this),
        lease_pool(s, LeasePoolOptions(o, this)) {}

  static LeasePool::Options LeasePoolOptions(const ServiceOptions& o, Impl* impl) {
    LeasePool::Options po;
    po.hold_ms = o.lease_prefetch_ms;
    po.on_returned = [impl](int jobs) {
      if (impl->metrics != nullptr) impl->metrics->LeasePoolReturned(jobs);
      impl->Wake();
    };
    po.on_database_lease = [impl](double seconds) {
      if (impl->metrics != nullptr) impl->metrics->LeaseQueried(seconds);
    };
    return po;
  }

  Specs specs;
  Targets targets;
  Runs runs;
  Findings findings;
  Workers workers;
  Campaigns campaigns;
  // Last: its maintenance thread calls Wake(), so it goes first.
  LeasePool lease_pool;
};

CoordinatorServices::CoordinatorServices(Store* store, ServiceOptions options)
    : impl_(std::make_unique<Impl>(store, options)) {}

CoordinatorServices::~CoordinatorServices() = default;

std::vector<grpc::Service*> CoordinatorServices::services() {
  return {&impl_->specs,    &impl_->targets, &impl_->runs,
          &impl_->findings, &impl_->workers, &impl_->campaigns};
}

void CoordinatorServices::NotifyJobsAvailable() { impl_->Wake(); }

void CoordinatorServices::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(impl_->wake_mu);
    impl_->stopping = true;
  }
  impl_->wake_cv.notify_all();
  // Held jobs go back to the queue (if the database is down they expire).
  if (auto st = impl_->lease_pool.Close(); !st.ok())
    std::cerr << "dualswarm-coordinator: returning held leases: " << st.message() << "\n";
}

}  // namespace dualswarm::coord
