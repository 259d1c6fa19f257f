// The Store's own part: opening it, its pool of connections, and schema
// migrations. Each concept's calls are in their own file (specs.cc,
// targets.cc, runs.cc, job_queue.cc, findings.cc, campaigns.cc,
// workers.cc); docs/coordinator.md lists them.
#include "services/coordinator/store/store.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/coordinator/store/migrations.h"
#include "services/coordinator/store/transaction.h"
#include "util/status_macros.h"

namespace dualswarm::coord {
namespace {

// Any number; identifies the coordinator's migration lock among advisory locks.
constexpr int64_t kMigrationLockKey = 0x6473776d69677231;  // "dswmigr1"

}  // namespace

// ---------------------------------------------------------------------------
// Connections (the pool); transactions are in transaction.h

std::string ConnectionUrlWithLimits(const std::string& url, int connect_timeout_s, int statement_timeout_ms) {
  bool uri = absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://");
  std::string out = url;
  auto add = [&](const std::string& key, const std::string& kv_value, const std::string& uri_value) {
    if (absl::StrContains(url, key)) return;  // the caller's choice stands
    if (uri) {
      absl::StrAppend(&out, absl::StrContains(out, "?") ? "&" : "?", key, "=", uri_value);
    } else {
      absl::StrAppend(&out, out.empty() ? "" : " ", key, "=", kv_value);
    }
  };
  if (connect_timeout_s > 0) add("connect_timeout", absl::StrCat(connect_timeout_s), absl::StrCat(connect_timeout_s));
  if (statement_timeout_ms > 0)
    add("options", absl::StrCat("'-c statement_timeout=", statement_timeout_ms, "'"),
        absl::StrCat("-c%20statement_timeout%3D", statement_timeout_ms));
  return out;
}

Store::Store(Options options) : options_(std::move(options)) {
  if (options_.pool_size < 1) options_.pool_size = 1;
  if (options_.max_attempts < 1) options_.max_attempts = 1;
  options_.url = ConnectionUrlWithLimits(options_.url, options_.connect_timeout_s, options_.statement_timeout_ms);
  if (options_.statement_timeout_ms > 0) watchdog_ = std::make_unique<SocketWatchdog>();
}

std::chrono::milliseconds GiveUpOnDatabaseAfter(int statement_timeout_ms) {
  int ms = statement_timeout_ms;
  return std::chrono::milliseconds(ms > 0 ? ms + 1000 + ms / 4 : 0);
}

Store::~Store() = default;

absl::StatusOr<std::unique_ptr<Store>> Store::Open(Options options) {
  std::unique_ptr<Store> store(new Store(std::move(options)));
  RETURN_IF_ERROR(store->Migrate().status());
  return store;
}

absl::StatusOr<std::unique_ptr<Store::Conn>> Store::Acquire(bool* fresh) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] { return !idle_.empty() || open_ < options_.pool_size; };
    if (GiveUpAfter().count() == 0) {
      cv_.wait(lock, ready);
    } else if (!cv_.wait_for(lock, GiveUpAfter(), ready)) {
      return absl::UnavailableError(absl::StrCat("database unavailable: all ", options_.pool_size,
                                                 " connections stayed busy for ", GiveUpAfter().count(), " ms"));
    }
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      *fresh = false;
      return conn;
    }
    ++open_;
  }
  *fresh = true;
  try {
    return std::make_unique<Conn>(options_.url);
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --open_;
    }
    cv_.notify_one();
    return absl::UnavailableError(
        absl::StrCat("database unavailable: cannot connect: ", absl::StripAsciiWhitespace(e.what())));
  }
}

void Store::Release(std::unique_ptr<Conn> conn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (conn != nullptr && conn->c.is_open()) {
      idle_.push_back(std::move(conn));
    } else {
      --open_;
    }
  }
  cv_.notify_one();
}

void Store::DropIdle() {
  std::vector<std::unique_ptr<Conn>> drop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    drop.swap(idle_);
    open_ -= static_cast<int>(drop.size());
  }
  cv_.notify_all();
}

// ---------------------------------------------------------------------------
// Migrations

absl::StatusOr<int> Store::Migrate() {
  return Run<int>("applying migrations", [&](Sql& w) -> absl::StatusOr<int> {
    // One coordinator at a time; the lock ends with the transaction.
    w.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
    w.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "  version integer PRIMARY KEY,"
        "  name text NOT NULL,"
        "  applied_at timestamptz NOT NULL DEFAULT now())");
    int current = static_cast<int>(w.exec1("SELECT COALESCE(max(version), 0) FROM schema_migrations")[0].as<int64_t>());
    int newest = Migrations().empty() ? 0 : Migrations().back().version;
    if (current > newest)
      return absl::FailedPreconditionError(absl::StrCat("the database schema is version ", current,
                                                        ", newer than this coordinator's (", newest,
                                                        "); upgrade the coordinator"));
    int applied = 0;
    for (const Migration& m : Migrations()) {
      if (m.version <= current) continue;
      w.exec(m.sql);
      w.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, std::string(m.name));
      ++applied;
    }
    return applied;
  });
}

absl::StatusOr<int> Store::SchemaVersion() {
  return Run<int>("reading the schema version", [&](Sql& w) -> absl::StatusOr<int> {
    pqxx::row r = w.exec1(
        "SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN 0"
        " ELSE (SELECT COALESCE(max(version), 0) FROM schema_migrations) END");
    return static_cast<int>(r[0].as<int64_t>());
  });
}

}  // namespace dualswarm::coord
