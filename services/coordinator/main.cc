// dualswarm-coordinator: the coordinator server, and its admin commands.
//
//   dualswarm-coordinator [--listen 127.0.0.1:7420] [--database-url URL | --data-dir DIR]
//                         [--lease-ms 30000] [--auth=false] [--tls-cert F --tls-key F]
//                         [--metrics-listen 127.0.0.1:9464] [--lease-poll-ms 250]
//                         [--max-message-bytes 16777216] [--http-listen 127.0.0.1:7421]
//                         [--web-dir DIR]
//   dualswarm-coordinator token create --role admin|submitter|worker [--name N]
//                         [--database-url URL | --data-dir DIR]
//
// Without --database-url the coordinator runs its own PostgreSQL in
// --data-dir (EmbeddedPostgres) and stops it on shutdown (SIGINT/SIGTERM).
// Flags may be spelled with hyphens or underscores (--data-dir, --data_dir).
// Bad flags (including unreadable or mismatched TLS files) exit with 2
// before the database is touched; a database that cannot be opened exits 1.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/coordinator/http_gateway.h"
#include "services/coordinator/metrics.h"
#include "services/coordinator/scheduler.h"
#include "services/coordinator/services.h"
#include "services/coordinator/store/embedded_pg.h"
#include "services/coordinator/store/store.h"
#include "util/help_flag.h"
#include "util/hyphen_flags.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7420",
          "HOST:PORT for the gRPC API (port 0: any free port, printed at start)");
ABSL_FLAG(std::string, database_url, "",
          "PostgreSQL to use (libpq connection string or postgresql:// URL); empty: run an "
          "embedded PostgreSQL in --data-dir");
ABSL_FLAG(std::string, data_dir, "dualswarm-data", "directory of the embedded PostgreSQL (created if missing)");
ABSL_FLAG(int64_t, lease_ms, 30000, "how long a job lease lasts without a heartbeat");
ABSL_FLAG(int64_t, lease_poll_ms, 250,
          "a waiting LeaseJobs asks the database at least this often (10..60000): how soon it "
          "sees jobs submitted through another replica and expired leases; jobs submitted here "
          "wake it at once");
ABSL_FLAG(int64_t, lease_prefetch_ms, 50,
          "lease pool hold time (0..10000): when workers lease faster than one database "
          "statement per call serves, each database lease also takes about half this many ms "
          "of recent demand ahead, and held jobs nobody took within it go back to the queue; "
          "0 leases only what each call asks for");
ABSL_FLAG(bool, auth, true, "require bearer tokens (false: every caller is an admin; local use only)");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls-key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --tls-cert");
ABSL_FLAG(int64_t, max_message_bytes, 16 << 20,
          "largest request accepted (bytes, 1 MiB..1 GiB); a larger one is refused with "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(std::string, role, "", "token create: admin, submitter or worker");
ABSL_FLAG(std::string, name, "", "token create: a name for the token (shown as submitted_by)");
ABSL_FLAG(int, db_pool, 16, "database connections kept open at most");
ABSL_FLAG(int, db_statement_timeout_ms, dualswarm::coord::kDefaultStatementTimeoutMs,
          "a database statement running longer is cancelled, and a database that does not answer at "
          "all is given up on after this + 1 s + a quarter: the call answers UNAVAILABLE (0: no limit). "
          "Keep that give-up (+ 5 s connect timeout) below the clients' deadlines (30 s for the CLI "
          "and the HTTP gateway), or they see DEADLINE_EXCEEDED instead");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "HOST:PORT for Prometheus metrics (GET /metrics; port 0: any free port, printed at "
          "start; empty: no metrics). The default is best effort: if it is taken the "
          "coordinator warns and runs without metrics; an address given here must work");

ABSL_FLAG(std::string, http_listen, "127.0.0.1:7421",
          "HOST:PORT for the web UI and the JSON API over HTTP (/api/v1/..., same tokens as "
          "gRPC; port 0: any free port, printed at start; empty: off). The default is best "
          "effort: if it is taken the coordinator warns and runs without it; an address given "
          "here must work");
ABSL_FLAG(std::string, web_dir, "",
          "serve the web UI from this directory instead of the copy built into the binary "
          "(for editing web/ without rebuilding)");

namespace dualswarm::coord {
namespace {

// Prints "dualswarm-coordinator: LINE" to stderr in one write: scripts and
// tests read the ports from these lines, and std::cerr writes each <<
// piece on its own, so a reader could see a line without its port yet.
void Announce(const std::string& line) {
  std::cerr << absl::StrCat("dualswarm-coordinator: ", line, "\n") << std::flush;
}

constexpr const char* kUsage =
    "dualswarm-coordinator: the Dualswarm coordinator.\n\n"
    "  dualswarm-coordinator [--listen HOST:PORT] [--database-url URL | --data-dir DIR]\n"
    "                        [--lease-ms N] [--auth=false] [--tls-cert F --tls-key F]\n"
    "                        [--metrics-listen HOST:PORT] [--lease-poll-ms N] [--lease-prefetch-ms N]\n"
    "                        [--max-message-bytes N] [--http-listen HOST:PORT] [--web-dir DIR]\n"
    "                        [--db-pool N] [--db-statement-timeout-ms N]\n"
    "  dualswarm-coordinator token create --role admin|submitter|worker [--name N]\n"
    "                        [--database-url URL | --data-dir DIR]";

// The whole file, or why it cannot be read (`what` names the flag).
absl::StatusOr<std::string> ReadFile(const char* what, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read \"", path, "\": ", std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read \"", path, "\""));
  return ss.str();
}

// Server credentials from --tls-cert/--tls-key (insecure without them). The
// files are read and checked here (PEM certificate, PEM private key that
// belongs to it), so a bad file is a clear start-up error rather than
// failing TLS handshakes later.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials() {
  std::string cert_path = absl::GetFlag(FLAGS_tls_cert), key_path = absl::GetFlag(FLAGS_tls_key);
  if (cert_path.empty() != key_path.empty()) return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  if (cert_path.empty()) return grpc::InsecureServerCredentials();
  auto cert = ReadFile("--tls-cert", cert_path);
  if (!cert.ok()) return cert.status();
  auto key = ReadFile("--tls-key", key_path);
  if (!key.ok()) return key.status();
  BIO* cert_bio = BIO_new_mem_buf(cert->data(), static_cast<int>(cert->size()));
  X509* x509 = cert_bio ? PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(key->data(), static_cast<int>(key->size()));
  EVP_PKEY* pkey = key_bio ? PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(key_bio);
  absl::Status st;
  if (x509 == nullptr)
    st = absl::InvalidArgumentError(absl::StrCat("--tls-cert: \"", cert_path, "\" holds no PEM certificate"));
  else if (pkey == nullptr)
    st = absl::InvalidArgumentError(absl::StrCat("--tls-key: \"", key_path, "\" holds no unencrypted PEM private key"));
  else if (X509_check_private_key(x509, pkey) != 1)
    st = absl::InvalidArgumentError(
        absl::StrCat("--tls-key: \"", key_path, "\" is not the key of the certificate in \"", cert_path, "\""));
  X509_free(x509);
  EVP_PKEY_free(pkey);
  ERR_clear_error();  // leave no stale errors for gRPC's own OpenSSL calls
  if (!st.ok()) return st;
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(ssl);
}

// The database: --database-url, or the embedded one in --data-dir.
struct Database {
  std::unique_ptr<EmbeddedPostgres> embedded;
  std::unique_ptr<Store> store;
};

absl::StatusOr<Database> OpenDatabase() {
  Database db;
  std::string url = absl::GetFlag(FLAGS_database_url);
  if (url.empty()) {
    EmbeddedPostgres::Options o;
    o.root = std::filesystem::absolute(absl::GetFlag(FLAGS_data_dir)).lexically_normal().string();
    db.embedded = std::make_unique<EmbeddedPostgres>(o);
    if (auto st = db.embedded->Start(); !st.ok()) return st;
    url = db.embedded->ConnectionString();
  }
  Store::Options so;
  so.url = url;
  so.pool_size = absl::GetFlag(FLAGS_db_pool);
  so.statement_timeout_ms = absl::GetFlag(FLAGS_db_statement_timeout_ms);
  if (so.statement_timeout_ms < 0)
    return absl::InvalidArgumentError("--db-statement-timeout-ms must be 0 (no limit) or positive");
  auto store = Store::Open(so);
  if (!store.ok()) return store.status();
  db.store = std::move(*store);
  return db;
}

int TokenCreate() {
  auto db = OpenDatabase();
  if (!db.ok()) {
    std::cerr << "dualswarm-coordinator: " << db.status().message() << "\n";
    return 1;
  }
  auto token = db->store->CreateToken(absl::GetFlag(FLAGS_role), absl::GetFlag(FLAGS_name));
  if (!token.ok()) {
    std::cerr << "dualswarm-coordinator: " << token.status().message() << "\n";
    return absl::IsInvalidArgument(token.status()) ? 2 : 1;
  }
  std::cout << *token << "\n";
  return 0;
}

// Whether --NAME (normalised) appears among the arguments.
bool FlagGiven(const std::vector<std::string>& args, const std::string& name) {
  for (const auto& a : args)
    if (a == "--" + name || a.rfind("--" + name + "=", 0) == 0) return true;
  return false;
}

// What serving needs from the flags, checked before anything starts: a
// mistake must not cost a database start.
struct ServeConfig {
  ServiceOptions services;
  int64_t max_message = 0;
  std::shared_ptr<grpc::ServerCredentials> creds;
};

// 0, or the exit code (2) after saying what is wrong.
int ReadServeConfig(ServeConfig* c) {
  ServiceOptions& so = c->services;
  so.require_auth = absl::GetFlag(FLAGS_auth);
  so.lease_ms = absl::GetFlag(FLAGS_lease_ms);
  if (so.lease_ms < 100) {
    std::cerr << "dualswarm-coordinator: --lease-ms must be at least 100\n";
    return 2;
  }
  so.lease_poll_ms = absl::GetFlag(FLAGS_lease_poll_ms);
  if (so.lease_poll_ms < 10 || so.lease_poll_ms > 60000) {
    std::cerr << "dualswarm-coordinator: --lease-poll-ms must be between 10 and 60000\n";
    return 2;
  }
  so.lease_prefetch_ms = absl::GetFlag(FLAGS_lease_prefetch_ms);
  if (so.lease_prefetch_ms < 0 || so.lease_prefetch_ms > 10000 || so.lease_prefetch_ms * 4 > so.lease_ms) {
    std::cerr << "dualswarm-coordinator: --lease-prefetch-ms must be between 0 and 10000 and at most "
                 "a quarter of --lease-ms (0 turns prefetching off)\n";
    return 2;
  }
  c->max_message = absl::GetFlag(FLAGS_max_message_bytes);
  if (c->max_message < (1 << 20) || c->max_message > (1 << 30)) {
    std::cerr << "dualswarm-coordinator: --max-message-bytes must be between 1048576 (1 MiB) and "
                 "1073741824 (1 GiB)\n";
    return 2;
  }
  if (auto st = HttpGateway::CheckListen(absl::GetFlag(FLAGS_http_listen)); !st.ok()) {
    std::cerr << "dualswarm-coordinator: " << st.message() << "\n";
    return 2;
  }
  auto creds = ServerCredentials();
  if (!creds.ok()) {
    std::cerr << "dualswarm-coordinator: " << creds.status().message() << "\n";
    return 2;
  }
  c->creds = *creds;
  return 0;
}

// Serves /metrics when --metrics-listen says so: 0, or the exit code (1)
// when an explicitly given address cannot be served.
int StartMetrics(CoordinatorMetrics* metrics, const std::vector<std::string>& storage_of_args) {
  std::string at = absl::GetFlag(FLAGS_metrics_listen);
  if (at.empty()) return 0;
  auto metrics_port = metrics->Serve(at);
  if (metrics_port.ok()) {
    Announce(absl::StrCat("metrics on ", at.substr(0, at.rfind(':')), ":", *metrics_port));
  } else if (FlagGiven(storage_of_args, "metrics_listen")) {
    std::cerr << "dualswarm-coordinator: " << metrics_port.status().message() << "\n";
    return 1;
  } else {
    std::cerr << "dualswarm-coordinator: warning: " << metrics_port.status().message()
              << "; running without metrics (choose an address with --metrics-listen)" << std::endl;
  }
  return 0;
}

// The gRPC server: the services, behind the auth interceptor (first: it
// decides who may call) and the RPC counter. Null if it cannot listen.
std::unique_ptr<grpc::Server> StartServer(const ServeConfig& config, CoordinatorServices* services,
                                          CoordinatorMetrics* metrics, int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), config.creds, port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message));
  for (grpc::Service* s : services->services()) builder.RegisterService(s);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(services->AuthInterceptor());
  interceptors.push_back(metrics->RpcCounter());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || *port == 0) return nullptr;
  return server;
}

// The HTTP gateway when --http-listen says so. It calls the services through
// an in-process channel: same handlers, auth and metrics as gRPC clients.
// *http_failed: the exit code when an explicit --http-listen cannot be
// served (0 otherwise).
std::unique_ptr<HttpGateway> StartGateway(grpc::Server* server, const std::vector<std::string>& storage_of_args,
                                          int* http_failed) {
  *http_failed = 0;
  std::string at = absl::GetFlag(FLAGS_http_listen);
  if (at.empty()) return nullptr;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);  // a finding with 100 counterexamples
  HttpGateway::Options go;
  go.listen = at;
  go.web_dir = absl::GetFlag(FLAGS_web_dir);
  auto gateway = std::make_unique<HttpGateway>(server->InProcessChannel(args), go);
  auto http_port = gateway->Start();
  if (http_port.ok()) {
    Announce(absl::StrCat("http on ", at.substr(0, at.rfind(':')), ":", *http_port));
  } else if (FlagGiven(storage_of_args, "http_listen") || absl::IsInvalidArgument(http_port.status())) {
    std::cerr << "dualswarm-coordinator: " << http_port.status().message() << "\n";
    *http_failed = absl::IsInvalidArgument(http_port.status()) ? 2 : 1;
  } else {
    gateway.reset();
    std::cerr << "dualswarm-coordinator: warning: " << http_port.status().message()
              << "; running without the web UI (choose an address with --http-listen)" << std::endl;
  }
  return gateway;
}

// Expired leases go back to the queue even when no worker is leasing: a
// thread that requeues every lease_ms/2 until destroyed.
class Requeuer {
 public:
  Requeuer(Store* store, CoordinatorServices* services, int64_t lease_ms)
      : thread_([this, store, services, lease_ms] {
          absl::MutexLock lock(&mu_);
          auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
          while (!mu_.AwaitWithTimeout(absl::Condition(&stopping),
                                       absl::Milliseconds(std::max<int64_t>(lease_ms / 2, 100)))) {
            mu_.Unlock();
            auto requeued = store->RequeueExpiredLeases();
            if (requeued.ok() && *requeued > 0) services->NotifyJobsAvailable();
            mu_.Lock();
          }
        }) {}
  ~Requeuer() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    thread_.join();
  }

 private:
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: it uses the members above
};

int Serve(const std::vector<std::string>& storage_of_args) {
  // Signals are taken by a dedicated thread (sigwait), so block them in
  // every thread first.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServeConfig config;
  if (int code = ReadServeConfig(&config); code != 0) return code;
  auto db = OpenDatabase();
  if (!db.ok()) {
    std::cerr << "dualswarm-coordinator: " << db.status().message() << "\n";
    return 1;
  }
  CoordinatorMetrics::Options mo;
  mo.lease_ms = config.services.lease_ms;
  auto metrics = std::make_unique<CoordinatorMetrics>(db->store.get(), mo);
  if (int code = StartMetrics(metrics.get(), storage_of_args); code != 0) return code;
  config.services.metrics = metrics.get();
  CoordinatorServices services(db->store.get(), config.services);
  int port = 0;
  std::unique_ptr<grpc::Server> server = StartServer(config, &services, metrics.get(), &port);
  if (server == nullptr) {
    std::cerr << "dualswarm-coordinator: cannot listen on " << absl::GetFlag(FLAGS_listen) << "\n";
    return 1;
  }
  int http_failed = 0;  // exit code when an explicit --http-listen cannot be served
  std::unique_ptr<HttpGateway> gateway = StartGateway(server.get(), storage_of_args, &http_failed);
  std::string host = absl::GetFlag(FLAGS_listen);
  host = host.substr(0, host.rfind(':'));
  if (http_failed == 0) {
    Announce(absl::StrCat(
        "listening on ", host, ":", port,
        db->embedded ? absl::StrCat(" (embedded PostgreSQL on port ", db->embedded->port(), ")") : std::string("")));
  }
  auto requeuer = std::make_unique<Requeuer>(db->store.get(), &services, config.services.lease_ms);

  // Campaigns: every replica runs the scheduler; a firing locks its
  // campaign row, so each fire time submits one run (scheduler.h).
  CampaignScheduler::Options cso;
  cso.on_fired = [&services, &metrics](const FiredCampaign& f) {
    if (metrics != nullptr) metrics->CampaignFired(f.run_id != 0);
    if (f.run_id != 0) services.NotifyJobsAvailable();
  };
  CampaignScheduler scheduler(db->store.get(), cso);
  scheduler.Start();

  int sig = 0;
  if (http_failed == 0) {
    sigwait(&stop_signals, &sig);
    std::cerr << "dualswarm-coordinator: stopping (signal " << sig << ")" << std::endl;
  }
  if (gateway) gateway->Stop();  // no new calls into the services
  services.Shutdown();           // waiting LeaseJobs calls return now
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  requeuer.reset();
  scheduler.Stop();
  metrics.reset();  // its refresher uses the store
  db->store.reset();
  if (db->embedded) {
    if (auto st = db->embedded->Stop(); !st.ok()) {
      std::cerr << "dualswarm-coordinator: " << st.message() << "\n";
      return 1;
    }
  }
  return http_failed;
}

}  // namespace
}  // namespace dualswarm::coord

int main(int argc, char** argv) {
  // Debian's abseil checks every absl::Mutex (gRPC's locks) for lock-order
  // cycles, a graph update per acquisition: ~3% of the coordinator's CPU on
  // the lease path (perf, lease_bench).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::SetProgramUsageMessage(dualswarm::coord::kUsage);
  // --help lists this file's flags (abseil's default looks for a file named
  // after the binary).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) { return absl::EndsWith(file, "coordinator/main.cc"); };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  if (dualswarm::util::AnswerHelp(argc, argv, dualswarm::coord::kUsage, "coordinator/main.")) return 0;
  std::vector<std::string> storage;
  std::vector<char*> args = dualswarm::util::NormaliseFlagNames(argc, argv, &storage);
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  std::vector<std::string> cmd(positional.begin() + 1, positional.end());
  if (cmd.empty()) return dualswarm::coord::Serve(storage);
  if (cmd.size() == 2 && cmd[0] == "token" && cmd[1] == "create") return dualswarm::coord::TokenCreate();
  std::cerr << "dualswarm-coordinator: unknown command \"" << cmd[0] << "\"\n" << dualswarm::coord::kUsage << "\n";
  return 2;
}
