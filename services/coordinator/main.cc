// dualswarm-coordinator: the coordinator server, and its admin commands.
//
//   dualswarm-coordinator [--listen 127.0.0.1:7420] [--database-url URL | --data-dir DIR]
//                         [--lease-ms 30000] [--auth=false] [--tls-cert F --tls-key F]
//   dualswarm-coordinator token create --role admin|submitter|worker [--name N]
//                         [--database-url URL | --data-dir DIR]
//
// Without --database-url the coordinator runs its own PostgreSQL in
// --data-dir (EmbeddedPostgres) and stops it on shutdown (SIGINT/SIGTERM).
// Flags may be spelled with hyphens or underscores (--data-dir, --data_dir).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
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
#include "absl/strings/str_cat.h"
#include "services/coordinator/services.h"
#include "services/coordinator/store/embedded_pg.h"
#include "services/coordinator/store/store.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7420",
          "HOST:PORT for the gRPC API (port 0: any free port, printed at start)");
ABSL_FLAG(std::string, database_url, "",
          "PostgreSQL to use (libpq connection string or postgresql:// URL); empty: run an "
          "embedded PostgreSQL in --data-dir");
ABSL_FLAG(std::string, data_dir, "dualswarm-data",
          "directory of the embedded PostgreSQL (created if missing)");
ABSL_FLAG(int64_t, lease_ms, 30000, "how long a job lease lasts without a heartbeat");
ABSL_FLAG(bool, auth, true, "require bearer tokens (false: every caller is an admin; local use only)");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls-key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --tls-cert");
ABSL_FLAG(std::string, role, "", "token create: admin, submitter or worker");
ABSL_FLAG(std::string, name, "", "token create: a name for the token (shown as submitted_by)");
ABSL_FLAG(int, db_pool, 16, "database connections kept open at most");

namespace dualswarm::coord {
namespace {

constexpr const char* kUsage =
    "dualswarm-coordinator: the Dualswarm coordinator.\n\n"
    "  dualswarm-coordinator [--listen HOST:PORT] [--database-url URL | --data-dir DIR]\n"
    "                        [--lease-ms N] [--auth=false] [--tls-cert F --tls-key F]\n"
    "  dualswarm-coordinator token create --role admin|submitter|worker [--name N]\n"
    "                        [--database-url URL | --data-dir DIR]";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// abseil flag names are identifiers: accept --data-dir for --data_dir.
std::vector<char*> NormaliseFlags(int argc, char** argv, std::vector<std::string>* storage) {
  storage->reserve(static_cast<size_t>(argc));
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i > 0 && a.size() > 2 && a.compare(0, 2, "--") == 0) {
      size_t end = a.find('=');
      if (end == std::string::npos) end = a.size();
      for (size_t k = 2; k < end; ++k)
        if (a[k] == '-') a[k] = '_';
    }
    storage->push_back(a);
  }
  std::vector<char*> out;
  for (auto& s : *storage) out.push_back(s.data());
  return out;
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

int Serve() {
  // Signals are taken by a dedicated thread (sigwait), so block them in
  // every thread first.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto db = OpenDatabase();
  if (!db.ok()) {
    std::cerr << "dualswarm-coordinator: " << db.status().message() << "\n";
    return 1;
  }
  ServiceOptions so;
  so.require_auth = absl::GetFlag(FLAGS_auth);
  so.lease_ms = absl::GetFlag(FLAGS_lease_ms);
  if (so.lease_ms < 100) {
    std::cerr << "dualswarm-coordinator: --lease-ms must be at least 100\n";
    return 2;
  }
  CoordinatorServices services(db->store.get(), so);

  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  std::string cert = absl::GetFlag(FLAGS_tls_cert), key = absl::GetFlag(FLAGS_tls_key);
  if (cert.empty() != key.empty()) {
    std::cerr << "dualswarm-coordinator: --tls-cert and --tls-key go together\n";
    return 2;
  }
  if (!cert.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({ReadAll(key), ReadAll(cert)});
    creds = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), creds, &port);
  builder.SetMaxReceiveMessageSize(16 << 20);
  for (grpc::Service* s : services.services()) builder.RegisterService(s);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::cerr << "dualswarm-coordinator: cannot listen on " << absl::GetFlag(FLAGS_listen) << "\n";
    return 1;
  }
  std::string host = absl::GetFlag(FLAGS_listen);
  host = host.substr(0, host.rfind(':'));
  std::cerr << "dualswarm-coordinator: listening on " << host << ":" << port
            << (db->embedded ? absl::StrCat(" (embedded PostgreSQL on port ", db->embedded->port(), ")")
                             : std::string(""))
            << std::endl;

  // Expired leases go back to the queue even when no worker is leasing.
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::thread requeuer([&] {
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(so.lease_ms / 2, 100)),
                        [&] { return stopping; })) {
      lock.unlock();
      (void)db->store->RequeueExpiredLeases();
      lock.lock();
    }
  });

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cerr << "dualswarm-coordinator: stopping (signal " << sig << ")" << std::endl;
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  cv.notify_all();
  requeuer.join();
  db->store.reset();
  if (db->embedded) {
    if (auto st = db->embedded->Stop(); !st.ok()) {
      std::cerr << "dualswarm-coordinator: " << st.message() << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace dualswarm::coord

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(dualswarm::coord::kUsage);
  std::vector<std::string> storage;
  std::vector<char*> args = dualswarm::coord::NormaliseFlags(argc, argv, &storage);
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  std::vector<std::string> cmd(positional.begin() + 1, positional.end());
  if (cmd.empty()) return dualswarm::coord::Serve();
  if (cmd.size() == 2 && cmd[0] == "token" && cmd[1] == "create")
    return dualswarm::coord::TokenCreate();
  std::cerr << "dualswarm-coordinator: unknown command \"" << cmd[0] << "\"\n"
            << dualswarm::coord::kUsage << "\n";
  return 2;
}
