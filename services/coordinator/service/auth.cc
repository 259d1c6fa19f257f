#include "services/coordinator/service/auth.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/coordinator/service/handler_util.h"

namespace dualswarm::coord {
namespace {

// The role table: every RPC and the role besides admin that may call it
// ("" for admin only). Submitters manage campaigns like runs (a campaign only
// submits runs its creator could submit); targets, which say what a worker
// executes, are created by admins only.
struct RoleRow {
  absl::string_view method;
  absl::string_view role;
};
constexpr RoleRow kRoleTable[] = {
    {"/dualswarm.v1.SpecService/Create", "submitter"},
    {"/dualswarm.v1.SpecService/Get", "submitter"},
    {"/dualswarm.v1.SpecService/List", "submitter"},
    {"/dualswarm.v1.SpecService/Validate", "submitter"},
    {"/dualswarm.v1.TargetService/Create", ""},
    {"/dualswarm.v1.TargetService/Get", "submitter"},
    {"/dualswarm.v1.TargetService/List", "submitter"},
    {"/dualswarm.v1.RunService/Submit", "submitter"},
    {"/dualswarm.v1.RunService/Get", "submitter"},
    {"/dualswarm.v1.RunService/List", "submitter"},
    {"/dualswarm.v1.RunService/Cancel", "submitter"},
    {"/dualswarm.v1.RunService/Watch", "submitter"},
    {"/dualswarm.v1.RunService/ListJobs", "submitter"},
    {"/dualswarm.v1.RunService/GetCoverage", "submitter"},
    {"/dualswarm.v1.FindingService/List", "submitter"},
    {"/dualswarm.v1.FindingService/Get", "submitter"},
    {"/dualswarm.v1.CampaignService/Create", "submitter"},
    {"/dualswarm.v1.CampaignService/List", "submitter"},
    {"/dualswarm.v1.CampaignService/Get", "submitter"},
    {"/dualswarm.v1.CampaignService/Pause", "submitter"},
    {"/dualswarm.v1.CampaignService/Resume", "submitter"},
    {"/dualswarm.v1.CampaignService/Delete", "submitter"},
    {"/dualswarm.v1.CampaignService/ListRuns", "submitter"},
    {"/dualswarm.v1.CampaignService/GetCoverage", "submitter"},
    {"/dualswarm.v1.WorkerService/Register", "worker"},
    {"/dualswarm.v1.WorkerService/LeaseJobs", "worker"},
    {"/dualswarm.v1.WorkerService/Heartbeat", "worker"},
    {"/dualswarm.v1.WorkerService/CompleteJob", "worker"},
};

const RoleRow* FindRow(absl::string_view method) {
  for (const RoleRow& row : kRoleTable)
    if (row.method == method) return &row;
  return nullptr;
}

}  // namespace

bool InRoleTable(absl::string_view method) { return FindRow(method) != nullptr; }

absl::Status CheckRole(absl::string_view method, const Caller& caller) {
  const RoleRow* row = FindRow(method);
  if (row == nullptr)
    return absl::PermissionDeniedError(
        absl::StrCat("method ", method, " is not in the coordinator's role table: nobody may call it"));
  if (caller.role == "admin" || (!row->role.empty() && caller.role == row->role)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("role \"", caller.role, "\" may not call this method"));
}

// One call as the interceptor sees it: decides when the client's metadata
// arrives, and is the verdict Admit reads until the call ends.
class AuthGate::Call final : public grpc::experimental::Interceptor {
 public:
  Call(AuthGate* gate, grpc::experimental::ServerRpcInfo* info)
      : gate_(gate), method_(info->method() == nullptr ? "" : info->method()), ctx_(info->server_context()) {}

  ~Call() override {
    absl::MutexLock lock(&gate_->calls_mu_);
    auto it = gate_->calls_.find(ctx_);
    if (it != gate_->calls_.end() && it->second == this) gate_->calls_.erase(it);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(grpc::experimental::InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      absl::StatusOr<Caller> verdict = Decide(*methods->GetRecvInitialMetadata());
      absl::MutexLock lock(&gate_->calls_mu_);
      verdict_ = std::move(verdict);
      gate_->calls_[ctx_] = this;
    }
    methods->Proceed();
  }

  const absl::StatusOr<Caller>& verdict() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(gate_->calls_mu_) { return verdict_; }

 private:
  absl::StatusOr<Caller> Decide(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
    absl::StatusOr<Caller> caller = gate_->require_auth_ ? gate_->Authenticate(metadata) : Caller{"admin", "anonymous"};
    if (!caller.ok()) return caller.status();
    if (auto st = CheckRole(method_, *caller); !st.ok()) return st;
    return caller;
  }

  AuthGate* gate_;
  std::string method_;
  const grpc::ServerContextBase* ctx_;
  absl::StatusOr<Caller> verdict_ ABSL_GUARDED_BY(gate_->calls_mu_) =
      absl::InternalError("the call was not authorized yet");
};

namespace {

class AuthFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit AuthFactory(AuthGate* gate) : gate_(gate) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    return new AuthGate::Call(gate_, info);
  }

 private:
  AuthGate* gate_;
};

}  // namespace

AuthGate::AuthGate(Store* store, bool require_auth, int64_t token_cache_ms)
    : store_(store), require_auth_(require_auth), token_cache_ms_(token_cache_ms) {}

AuthGate::~AuthGate() = default;

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> AuthGate::Interceptor() {
  return std::make_unique<AuthFactory>(this);
}

absl::StatusOr<Caller> AuthGate::Authenticate(const std::multimap<grpc::string_ref, grpc::string_ref>& md) {
  auto it = md.find("authorization");
  if (it == md.end())
    return absl::UnauthenticatedError("missing bearer token (metadata \"authorization: Bearer TOKEN\")");
  std::string value(it->second.data(), it->second.size());
  std::string token;
  if (absl::StartsWithIgnoreCase(value, "bearer ")) token = std::string(absl::StripAsciiWhitespace(value.substr(7)));
  if (token.empty()) return absl::UnauthenticatedError("malformed authorization metadata");
  {
    absl::MutexLock lock(&tokens_mu_);
    auto hit = tokens_.find(token);
    if (hit != tokens_.end() && hit->second.expires > Clock::now()) return hit->second.caller;
  }
  auto who = store_->Authenticate(token);
  if (!who.ok()) return who.status();
  Caller caller{who->first, who->second};
  absl::MutexLock lock(&tokens_mu_);
  if (tokens_.size() >= kMaxCachedTokens) tokens_.clear();
  tokens_[token] = {caller, Clock::now() + std::chrono::milliseconds(token_cache_ms_)};
  return caller;
}

grpc::Status AuthGate::Admit(const grpc::ServerContextBase* ctx, Caller* caller) {
  absl::MutexLock lock(&calls_mu_);
  auto it = calls_.find(ctx);
  if (it == calls_.end())
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "no authorization verdict for this call (auth interceptor missing)");
  const absl::StatusOr<Caller>& verdict = it->second->verdict();
  if (!verdict.ok()) return ToGrpc(verdict.status());
  if (caller != nullptr) *caller = *verdict;
  return grpc::Status::OK;
}

}  // namespace dualswarm::coord
