// How a Store call runs its statements, internal to the store (store/*.cc):
// the pooled connection (Store::Conn) and the definitions of Store::Run,
// Store::RunSingle, Store::RunIn and Store::ReadRow, the member templates every section
// file calls. They are defined here, once, so each file that includes this
// header can instantiate them for its own result types.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_TRANSACTION_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_TRANSACTION_H_

#include <memory>
#include <string>
#include <utility>

#include <pqxx/pqxx>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/sql.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

struct Store::Conn {
  explicit Conn(const std::string& url) : c(url) {}
  pqxx::connection c;
};

// Runs fn(work) in a transaction on a pooled connection; commits when fn
// returns OK. Retries a few times on serialization failures and deadlocks,
// and once on a pooled connection found broken (the server restarted): the
// transaction had not committed, so running it again is safe.
template <typename T, typename Fn>
absl::StatusOr<T> Store::Run(const char* what, Fn&& fn) {
  return RunIn<pqxx::work, T>(what, std::forward<Fn>(fn));
}

// A broken connection in autocommit mode may have run the statement: only
// statements that are harmless to repeat use RunSingle (a lease: the job
// leased twice is handed out again when the first lease expires).
template <typename T, typename Fn>
absl::StatusOr<T> Store::RunSingle(const char* what, Fn&& fn) {
  return RunIn<pqxx::nontransaction, T>(what, std::forward<Fn>(fn));
}

template <typename Tx, typename T, typename Fn>
absl::StatusOr<T> Store::RunIn(const char* what, Fn&& fn) {
  absl::Status last;
  for (int attempt = 0; attempt < 4; ++attempt) {
    bool fresh = false;
    auto conn = Acquire(&fresh);
    if (!conn.ok()) return conn.status();
    bool broken = false, retryable = false;
    // A frozen server never answers, not even to cancel: the watchdog shuts
    // the socket down and the blocked call fails.
    uint64_t watch = watchdog_ ? watchdog_->Arm((*conn)->c.sock(), SocketWatchdog::Clock::now() + GiveUpAfter()) : 0;
    auto given_up = [&] { return watchdog_ != nullptr && watchdog_->Disarm(watch); };
    try {
      absl::StatusOr<T> result;
      {
        Tx tx((*conn)->c);
        Sql w(tx);
        result = fn(w);
        if (result.ok()) tx.commit();
      }
      if (given_up()) conn->reset();  // answered just in time; the socket is gone
      Release(std::move(*conn));
      return result;
    } catch (const std::exception& e) {
      last = MapException(what, e, &broken, &retryable);
    }
    if (given_up()) {
      broken = true;
      retryable = false;  // a fresh connection would hang the same way
      last = absl::UnavailableError(
          absl::StrCat("database unavailable: ", what, ": no answer within ", GiveUpAfter().count(), " ms"));
    }
    if (broken) {
      conn->reset();
      DropIdle();  // after a server restart every pooled connection is stale
    }
    Release(std::move(*conn));
    if (!retryable) return last;
    if (absl::IsUnavailable(last) && fresh) return last;  // a new connection failed: really down
  }
  return last;
}

template <typename Row, typename Key>
absl::StatusOr<Row> Store::ReadRow(const char* what, const Columns<Row>& columns, const std::string& missing,
                                   const std::string& from, const Key& key) {
  return Run<Row>(what, [&](Sql& w) { return ReadOne(w, columns, missing, from, key); });
}

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_TRANSACTION_H_
