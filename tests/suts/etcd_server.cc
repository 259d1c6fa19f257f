// ds-ref-etcd: a reference etcd KV service (the subset in
// specs/etcd_kv.proto: Range, Put, DeleteRange, Txn on single keys) for
// specs/etcd_kv.dspec through the grpc adapter, plus seeded bugs
// ("mutants"). A gRPC server from the code protoc generates for that file;
// gRPC's thread pool runs requests in parallel, and one mutex makes each
// request one atomic step (except where a mutant says otherwise).
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "etcd_kv.grpc.pb.h"
#include "sut_net.h"

namespace {

namespace pb = etcdserverpb;

const char kHelp[] =
    "usage: ds-ref-etcd [--port N] [--dir D] [--mutant N]\n"
    "\n"
    "An etcd-like gRPC key-value service (etcdserverpb.KV: Range, Put, DeleteRange,\n"
    "Txn; specs/etcd_kv.proto) used as a system under test for specs/etcd_kv.dspec.\n"
    "Listens on 127.0.0.1 only and prints \"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N     TCP port (0, the default, picks a free one)\n"
    "  --dir D      working directory (created if missing; data is kept in memory)\n"
    "  --mutant N   0 = correct server; N > 0 = seeded bug N:\n"
    "     1  Txn ignores its comparison: the success branch always runs\n"
    "     2  DeleteRange of an absent key raises the revision\n"
    "     3  Put resets the key's version to 1 instead of counting\n"
    "     4  lost update: Txn evaluates its comparison, releases the lock for 2 ms,\n"
    "        then applies the put (a write in between goes unnoticed)\n"
    "     5  stale reads: Range answers from a snapshot taken at every 4th write\n";
constexpr int kMaxMutant = 5;

enum Mutant : int {
  kCorrect = 0,
  kCompareIgnored = 1,
  kDeleteAbsentBumps = 2,
  kVersionReset = 3,
  kTxnRace = 4,
  kStaleRange = 5
};

class Kv final : public pb::KV::Service {
 public:
  explicit Kv(int mutant) : mutant_(mutant) {}

  grpc::Status Range(grpc::ServerContext*, const pb::RangeRequest* req, pb::RangeResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (mutant_ == kStaleRange) {
      FillRange(snapshot_, snapshot_rev_, req->key(), resp);
    } else {
      FillRange(store_, rev_, req->key(), resp);
    }
    return grpc::Status::OK;
  }

  grpc::Status Put(grpc::ServerContext*, const pb::PutRequest* req, pb::PutResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    ApplyPut(*req, resp);
    return grpc::Status::OK;
  }

  grpc::Status DeleteRange(grpc::ServerContext*, const pb::DeleteRangeRequest* req,
                           pb::DeleteRangeResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = store_.find(req->key());
    if (it != store_.end()) {
      if (req->prev_kv()) *resp->add_prev_kvs() = it->second;
      store_.erase(it);
      resp->set_deleted(1);
      Wrote();
    } else if (mutant_ == kDeleteAbsentBumps) {
      Wrote();
    }
    resp->mutable_header()->set_revision(rev_);
    return grpc::Status::OK;
  }

  // The tester's Txn: one comparison, one op per branch.
  grpc::Status Txn(grpc::ServerContext*, const pb::TxnRequest* req, pb::TxnResponse* resp) override {
    std::unique_lock<std::mutex> lock(mu_);
    bool holds = true;
    for (const pb::Compare& c : req->compare()) holds = holds && Holds(c);
    if (mutant_ == kCompareIgnored) holds = true;
    if (mutant_ == kTxnRace) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      lock.lock();
    }
    const auto& ops = holds ? req->success() : req->failure();
    bool wrote = false;
    for (const pb::RequestOp& op : ops) {
      pb::ResponseOp* out = resp->add_responses();
      if (op.has_request_put()) {
        if (!wrote) {
          Wrote();
          wrote = true;
        }
        SetKey(op.request_put());
        out->mutable_response_put()->mutable_header()->set_revision(rev_);
      } else if (op.has_request_range()) {
        FillRange(store_, rev_, op.request_range().key(), out->mutable_response_range());
      } else if (op.has_request_delete_range()) {
        return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "delete in a txn");
      }
    }
    resp->set_succeeded(holds);
    resp->mutable_header()->set_revision(rev_);
    return grpc::Status::OK;
  }

 private:
  using Store = std::map<std::string, pb::KeyValue>;

  static void FillRange(const Store& store, int64_t rev, const std::string& key, pb::RangeResponse* resp) {
    auto it = store.find(key);
    if (it != store.end()) {
      *resp->add_kvs() = it->second;
      resp->set_count(1);
    }
    resp->mutable_header()->set_revision(rev);
  }

  bool Holds(const pb::Compare& c) const {
    auto it = store_.find(c.key());
    switch (c.target()) {
      case pb::Compare::MOD:
        return (it == store_.end() ? 0 : it->second.mod_revision()) == c.mod_revision();
      case pb::Compare::VALUE:
        return it != store_.end() && it->second.value() == c.value();
      default:
        return false;
    }
  }

  void ApplyPut(const pb::PutRequest& req, pb::PutResponse* resp) {
    auto it = store_.find(req.key());
    if (req.prev_kv() && it != store_.end()) *resp->mutable_prev_kv() = it->second;
    Wrote();
    SetKey(req);
    resp->mutable_header()->set_revision(rev_);
  }

  // Sets a key at the current revision (already raised).
  void SetKey(const pb::PutRequest& req) {
    pb::KeyValue& kv = store_[req.key()];
    if (kv.create_revision() == 0) kv.set_create_revision(rev_);
    kv.set_key(req.key());
    kv.set_value(req.value());
    kv.set_mod_revision(rev_);
    kv.set_version(mutant_ == kVersionReset ? 1 : kv.version() + 1);
  }

  // A request changed the store: the revision goes up by one.
  void Wrote() {
    ++rev_;
    if (++writes_ % 4 == 0) {
      snapshot_ = store_;
      snapshot_rev_ = rev_;
    }
  }

  const int mutant_;
  std::mutex mu_;  // guards everything below
  Store store_;
  int64_t rev_ = 1;
  int64_t writes_ = 0;
  Store snapshot_;  // kStaleRange: the store as of snapshot_rev_
  int64_t snapshot_rev_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  dsut::Options opts = dsut::ParseOptionsOrExit(argc, argv, kHelp, kMaxMutant);
  // SIGTERM/SIGINT end the server: blocked here, waited for below.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  Kv service(opts.mutant);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(opts.port), grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "ds-ref-etcd: cannot listen on 127.0.0.1:%d\n", opts.port);
    return 1;
  }
  std::printf("listening on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}
