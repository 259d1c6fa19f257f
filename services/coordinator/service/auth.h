// Who may call what, checked once per call: a gRPC server interceptor
// (AuthGate::Interceptor) reads the bearer token of every incoming call,
// finds the caller's role (store tokens, cached briefly) and looks the
// method up in the role table (auth.cc, kRoleTable); the handler then asks
// for the verdict with one call (AuthGate::Admit) before it looks at the
// request, so a caller without the right role learns nothing from
// validation errors.
//
//   admin      everything
//   submitter  specs, runs, findings, campaigns, reading targets
//   worker     WorkerService
//
// Deny by default: a method missing from the table is refused to every
// caller, admin included. Missing or unknown token: UNAUTHENTICATED; a role
// that may not call the method: PERMISSION_DENIED.
//
// Why the handler still asks: gRPC C++ server interceptors cannot end a call
// themselves (no Hijack on the server, grpc/grpc#24017), so the interceptor
// decides and the handler obeys. A handler that forgets to ask is caught by
// tests/integration/coordinator_auth_test.cc, which calls every method of
// every service (read from the descriptors) as every kind of caller.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_AUTH_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_AUTH_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

// The caller of an RPC: its token's role and name ("admin"/"anonymous"
// when auth is off).
struct Caller {
  std::string role;
  std::string name;
};

// Whether `caller` may call `method` ("/dualswarm.v1.RunService/Submit"):
// OK, or PERMISSION_DENIED (also for a method the role table lacks).
absl::Status CheckRole(absl::string_view method, const Caller& caller);
// Whether the role table has a row for `method` (tests check every method).
bool InRoleTable(absl::string_view method);

class AuthGate {
 public:
  AuthGate(Store* store, bool require_auth, int64_t token_cache_ms);
  ~AuthGate();
  AuthGate(const AuthGate&) = delete;
  AuthGate& operator=(const AuthGate&) = delete;

  // Who sent `metadata` ("authorization: Bearer TOKEN"); UNAUTHENTICATED
  // for a missing, malformed or unknown token, UNAVAILABLE when the store
  // cannot tell.
  absl::StatusOr<Caller> Authenticate(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata);

  // The interceptor that decides every call; register it with the server
  // (ServerBuilder::experimental().SetInterceptorCreators) before the others.
  // It must not outlive this object.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> Interceptor();

  // The verdict on the call of `ctx`: OK (and *caller, when given) or the
  // status the handler must return at once. A call the interceptor did not
  // see (it is not installed) is refused.
  grpc::Status Admit(const grpc::ServerContextBase* ctx, Caller* caller = nullptr);

  // The interceptor's side (auth.cc).
  class Call;

 private:
  using Clock = std::chrono::steady_clock;
  struct TokenEntry {
    Caller caller;
    Clock::time_point expires;
  };
  static constexpr size_t kMaxCachedTokens = 10000;

  Store* store_;
  const bool require_auth_;
  const int64_t token_cache_ms_;

  // Valid tokens, remembered for token_cache_ms (the revocation delay).
  absl::Mutex tokens_mu_;
  absl::flat_hash_map<std::string, TokenEntry> tokens_ ABSL_GUARDED_BY(tokens_mu_);

  // The calls in flight, by their server context: the interceptor adds its
  // call when the call starts and removes it when the call ends.
  absl::Mutex calls_mu_;
  absl::flat_hash_map<const grpc::ServerContextBase*, Call*> calls_ ABSL_GUARDED_BY(calls_mu_);
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_AUTH_H_
