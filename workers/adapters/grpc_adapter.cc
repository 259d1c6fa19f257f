#include "workers/adapters/grpc_adapter.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <utility>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "util/status_macros.h"
#include "workers/adapters/grpc_catalog.h"
#include "workers/adapters/printable_sample.h"

namespace dualswarm::workers {
namespace {

// A request waiting for its connection's call in flight to end.
struct QueuedCall {
  const google::protobuf::MethodDescriptor* method;
  grpc::ByteBuffer request;
};

// The call in flight on a connection; its address is its completion's tag.
struct Call {
  size_t conn = 0;
  bool abandoned = false;  // its connection was closed (Adapter::Close) while it ran
  const google::protobuf::MethodDescriptor* method = nullptr;
  grpc::ClientContext ctx;
  grpc::ByteBuffer reply;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> reader;
};

struct Conn {
  std::string target;                      // "ipv4:HOST:PORT" of the node it calls
  std::shared_ptr<grpc::Channel> channel;  // null until the first request, and after a close
  std::unique_ptr<grpc::GenericStub> stub;
  std::unique_ptr<Call> in_flight;
  std::deque<QueuedCall> queued;
};

ir::Value StatusReply(const grpc::Status& s) {
  return ir::Value::Map({{"status", ir::Value::Map({{"code", ir::Value::String(absl::StatusCodeToString(
                                                                 static_cast<absl::StatusCode>(s.error_code())))},
                                                    {"message", ir::Value::String(s.error_message())}})}});
}

// A server that is reachable but does not speak HTTP/2 makes gRPC fail the
// call UNAVAILABLE; only the message tells it from a server that is gone.
// Non-empty (a finding's text) for the former.
std::string NotHttp2(const grpc::Status& s) {
  const std::string& m = s.error_message();
  if (m.find("Failed parsing HTTP/2") == std::string::npos && m.find("http1.x server") == std::string::npos) return "";
  return absl::StrCat("bytes that are not a valid response: the server does not speak HTTP/2, so not gRPC (", m, ")");
}

class GrpcAdapter : public Adapter {
 public:
  GrpcAdapter(std::unique_ptr<GrpcCatalog> catalog, const std::string& host, const std::vector<int>& ports)
      : catalog_(std::move(catalog)), conns_(ports.size()) {
    for (size_t i = 0; i < ports.size(); ++i) conns_[i].target = absl::StrCat("ipv4:", host, ":", ports[i]);
  }
  ~GrpcAdapter() override {
    CloseAll();
    cq_.Shutdown();
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  absl::Status Send(int conn, const ir::Value& request) override {
    if (conn < 0 || static_cast<size_t>(conn) >= conns_.size())
      return absl::InvalidArgumentError(absl::StrCat("no connection ", conn));
    ASSIGN_OR_RETURN(QueuedCall call, Prepare(request));
    Conn& c = conns_[static_cast<size_t>(conn)];
    if (c.channel == nullptr) Open(&c);
    c.queued.push_back(std::move(call));
    if (c.in_flight == nullptr) StartNext(static_cast<size_t>(conn));
    return absl::OkStatus();
  }

  absl::Status Poll(int timeout_ms, std::vector<AdapterEvent>* events) override {
    if (in_flight_ == 0) {
      if (timeout_ms > 0) absl::SleepFor(absl::Milliseconds(timeout_ms));
      return absl::OkStatus();
    }
    auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms);
    void* tag;
    bool ok;
    // Everything that has completed: the first wait up to the timeout, the
    // rest without waiting.
    while (in_flight_ > 0) {
      auto r = cq_.AsyncNext(&tag, &ok, deadline);
      if (r != grpc::CompletionQueue::GOT_EVENT) break;
      Complete(static_cast<Call*>(tag), events);
      deadline = std::chrono::system_clock::now();
    }
    if (!unreachable_.empty())
      return absl::UnavailableError(absl::StrCat("cannot connect to ", std::exchange(unreachable_, "")));
    return absl::OkStatus();
  }

  int MaxInFlightPerConnection() const override { return 1; }  // one call at a time per channel

  void Close(int conn) override {
    if (conn < 0 || static_cast<size_t>(conn) >= conns_.size()) return;
    Conn& c = conns_[static_cast<size_t>(conn)];
    c.queued.clear();
    // The call in flight is cancelled; its completion, when it comes, is
    // dropped.
    if (c.in_flight != nullptr) {
      c.in_flight->ctx.TryCancel();
      c.in_flight->abandoned = true;
      abandoned_.push_back(std::move(c.in_flight));
    }
    c.stub.reset();
    c.channel.reset();
  }

  void CloseAll() override {
    for (Conn& c : conns_) {
      if (c.in_flight != nullptr) c.in_flight->ctx.TryCancel();
      c.queued.clear();
    }
    // Cancelled calls still complete: wait for them, so that no call
    // outlives its context.
    void* tag;
    bool ok;
    while (in_flight_ > 0 && cq_.Next(&tag, &ok)) {
      --in_flight_;
      Call* call = static_cast<Call*>(tag);
      if (call->abandoned) {
        Forget(call);
      } else {
        conns_[call->conn].in_flight.reset();
      }
    }
    for (Conn& c : conns_) {
      c.stub.reset();
      c.channel.reset();
    }
  }

 private:
  absl::StatusOr<QueuedCall> Prepare(const ir::Value& request) const {
    const ir::Value* method = request.is_map() ? request.Find("method") : nullptr;
    const ir::Value* body = request.is_map() ? request.Find("request") : nullptr;
    if (method == nullptr || !method->is_string() || body == nullptr)
      return absl::InvalidArgumentError(
          "a grpc request is {\"method\": \"package.Service/Method\", \"request\": {...}}");
    ASSIGN_OR_RETURN(const google::protobuf::MethodDescriptor* m, catalog_->FindUnaryMethod(method->as_string()));
    ASSIGN_OR_RETURN(std::string bytes, catalog_->EncodeRequest(*m, *body));
    grpc::Slice slice(bytes);
    return QueuedCall{m, grpc::ByteBuffer(&slice, 1)};
  }

  void Open(Conn* c) {
    grpc::ChannelArguments args;
    // A channel of its own per connection: without a local subchannel
    // pool, channels to one address share their HTTP/2 connection.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetMaxReceiveMessageSize(static_cast<int>(kMaxGrpcMessageBytes));
    args.SetMaxSendMessageSize(static_cast<int>(kMaxGrpcMessageBytes));
    c->channel = grpc::CreateCustomChannel(c->target, grpc::InsecureChannelCredentials(), args);
    c->stub = std::make_unique<grpc::GenericStub>(c->channel);
  }

  void StartNext(size_t conn) {
    Conn& c = conns_[conn];
    if (c.queued.empty()) return;
    QueuedCall next = std::move(c.queued.front());
    c.queued.pop_front();
    auto call = std::make_unique<Call>();
    call->conn = conn;
    call->method = next.method;
    std::string path = absl::StrCat("/", next.method->service()->full_name(), "/", next.method->name());
    call->reader = c.stub->PrepareUnaryCall(&call->ctx, path, next.request, &cq_);
    call->reader->StartCall();
    call->reader->Finish(&call->reply, &call->status, call.get());
    c.in_flight = std::move(call);
    ++in_flight_;
  }

  // Drops an abandoned call once it completed.
  void Forget(Call* call) {
    abandoned_.erase(std::find_if(abandoned_.begin(), abandoned_.end(),
                                  [call](const std::unique_ptr<Call>& c) { return c.get() == call; }));
  }

  void Complete(Call* done, std::vector<AdapterEvent>* events) {
    --in_flight_;
    if (done->abandoned) {
      Forget(done);
      return;
    }
    const size_t conn = done->conn;
    Conn& c = conns_[conn];
    std::unique_ptr<Call> call = std::move(c.in_flight);
    int64_t now_ns = absl::GetCurrentTimeNanos();
    int i = static_cast<int>(conn);
    if (call->status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      std::string not_http2 = NotHttp2(call->status);
      // No connection could be made at all (as a TCP adapter's failed
      // connect): the SUT is gone, which Poll reports.
      if (not_http2.empty() && call->status.error_message().find("failed to connect") != std::string::npos)
        unreachable_ = absl::StrCat(c.target, ": ", call->status.error_message());
      CloseWithEvents(i, std::move(not_http2), absl::StrCat("UNAVAILABLE: ", call->status.error_message()), now_ns,
                      events);
      return;
    }
    if (!call->status.ok()) {
      events->push_back({AdapterEvent::Kind::kReceived, i, StatusReply(call->status), "", now_ns});
    } else {
      absl::StatusOr<ir::Value> reply = Decode(*call);
      if (!reply.ok()) {
        CloseWithEvents(i, std::string(reply.status().message()), "malformed response", now_ns, events);
        return;
      }
      events->push_back({AdapterEvent::Kind::kReceived, i, ir::Value::Map({{"reply", *std::move(reply)}}), "", now_ns});
    }
    StartNext(conn);
  }

  // Closes connection i: its queued requests are dropped and the next
  // request opens a new channel. A non-empty `malformed` reports bytes
  // that are not a response first. `now_ns`: when the call completed (the
  // runner orders a poll's events by it, so a close must not look older
  // than the responses before it).
  void CloseWithEvents(int i, std::string malformed, std::string why, int64_t now_ns,
                       std::vector<AdapterEvent>* events) {
    Conn& c = conns_[static_cast<size_t>(i)];
    c.queued.clear();
    c.stub.reset();
    c.channel.reset();
    if (!malformed.empty())
      events->push_back({AdapterEvent::Kind::kMalformed, i, ir::Value(), std::move(malformed), now_ns});
    events->push_back({AdapterEvent::Kind::kClosed, i, ir::Value(), std::move(why), now_ns});
  }

  absl::StatusOr<ir::Value> Decode(const Call& call) const {
    std::vector<grpc::Slice> slices;
    grpc::Status dumped = call.reply.Dump(&slices);
    std::string bytes;
    for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    absl::StatusOr<ir::Value> v = dumped.ok() ? catalog_->DecodeResponse(*call.method, bytes)
                                              : absl::InvalidArgumentError(dumped.error_message());
    if (v.ok()) return v;
    return absl::InvalidArgumentError(absl::StrCat(call.method->full_name(), " answered bytes that are not a valid ",
                                                   call.method->output_type()->full_name(),
                                                   " (bytes: ", PrintableSample(bytes), ")"));
  }

  std::unique_ptr<GrpcCatalog> catalog_;
  std::vector<Conn> conns_;
  grpc::CompletionQueue cq_;
  int in_flight_ = 0;                             // calls started and not yet taken off cq_ (abandoned ones too)
  std::vector<std::unique_ptr<Call>> abandoned_;  // cancelled by Close, not yet completed
  std::string unreachable_;                       // why a call could not connect (Poll reports it)
};

}  // namespace

absl::StatusOr<std::unique_ptr<Adapter>> MakeGrpcAdapter(const std::string& host, const std::vector<int>& ports,
                                                         absl::string_view descriptor_set) {
  if (descriptor_set.empty())
    return absl::InvalidArgumentError(
        "the grpc adapter needs a descriptor set (--descriptor-set FILE, made with protoc --descriptor_set_out=FILE "
        "--include_imports)");
  ASSIGN_OR_RETURN(std::unique_ptr<GrpcCatalog> catalog, GrpcCatalog::FromDescriptorSet(descriptor_set));
  return std::unique_ptr<Adapter>(new GrpcAdapter(std::move(catalog), host, ports));
}

}  // namespace dualswarm::workers
