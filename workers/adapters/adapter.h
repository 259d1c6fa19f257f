// Adapters: move messages between the tester and a system under test over
// several client connections. An adapter turns request IR into bytes
// (codec), keeps non-blocking TCP connections to the SUT (opened lazily,
// reopened after the SUT closes one), and turns bytes back into response
// IR. Bytes the codec cannot parse are reported beside the responses (an
// AdapterEvent of kind kMalformed), never inside the SUT's data and never
// as a crash: a response may carry any field, even one named "malformed".
#ifndef DUALSWARM_WORKERS_ADAPTERS_ADAPTER_H_
#define DUALSWARM_WORKERS_ADAPTERS_ADAPTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/ir/value.h"
#include "workers/adapters/origin_names.h"

namespace dualswarm::workers {

struct AdapterEvent {
  // kReceived: a complete response. kMalformed: bytes that are not a valid
  // response (`note` says why and quotes them; a kClosed follows).
  // kClosed: the connection is gone (`note` says why).
  enum class Kind { kReceived, kMalformed, kClosed };
  Kind kind;
  int conn;
  ir::Value msg;     // kReceived
  std::string note;  // kMalformed, kClosed
  // When the kernel received the bytes (CLOCK_REALTIME ns; 0 = unknown).
  // Events of one Poll may be reordered by it: the responses then reach the
  // checker in the order they reached this machine, which is the best guess
  // of the order the server sent them in (no request is sent in between, so
  // causality is the same either way).
  int64_t arrival_ns = 0;
  // From the origin listener (origin_listener.h): `conn` is an origin
  // connection, and kReceived a request the SUT sent the origin.
  bool origin = false;
};

// What a Decode call found besides complete responses.
struct DecodeResult {
  // Non-empty: the bytes after the responses returned are not a valid
  // response; says why and quotes (printable) bytes. Implies `close`.
  std::string malformed;
  // The connection cannot carry more responses (malformed bytes, or a
  // close-delimited body ended).
  bool close = false;
};

// Request/response framing for one protocol. Decoding is incremental: each
// call consumes the bytes it has parsed (a partial response is kept in the
// codec's own state, bounded), so feeding bytes in any split costs linear
// time and gives the same responses as feeding them at once.
class Codec {
 public:
  virtual ~Codec() = default;
  virtual absl::StatusOr<std::string> Encode(const ir::Value& request) = 0;
  // Takes complete responses off the front of `buf` into `out`, consuming
  // the bytes it parsed. `eof`: the peer closed (bytes of an unfinished
  // response are then malformed, except a close-delimited body).
  virtual DecodeResult Decode(std::string* buf, bool eof, std::vector<ir::Value>* out) = 0;
  // Resets per-connection parse state (a fresh connection).
  virtual std::unique_ptr<Codec> Clone() const = 0;
  // Whether the connection must be closed once the message Encode returned
  // last is written (the origin side of HTTP: the request it answers asked
  // for that, RFC 9112 §9.6).
  virtual bool EndsConnection() const { return false; }
};

// HTTP/1.1 for the clients (http_codec.cc); `names` maps the tester's
// origin endpoints in absolute-form targets and header values.
std::unique_ptr<Codec> MakeHttpCodec(std::string host_header, OriginNames names = {});
// HTTP/1.1 for the tester playing an intermediary's origin, directions
// flipped: decodes requests, encodes answers (http_origin_codec.cc).
std::unique_ptr<Codec> MakeHttpOriginCodec(OriginNames names);
std::unique_ptr<Codec> MakeJsonLinesCodec();
std::unique_ptr<Codec> MakeRespCodec();
// memcached's text protocol; the IR is in docs/adapters.md.
std::unique_ptr<Codec> MakeMemcachedCodec();

// A Send error that is the target's setup, neither the spec's nor the
// SUT's doing (an fs target's command the shell cannot start): the job
// ends with this error, never with a finding or a spec error.
absl::Status TargetSetupError(absl::string_view message);
bool IsTargetSetupError(const absl::Status& s);

class Adapter {
 public:
  virtual ~Adapter() = default;
  // Queues a request on `conn` (connecting first if needed). Unavailable
  // when the SUT cannot be reached; TargetSetupError when the target as
  // configured cannot work.
  virtual absl::Status Send(int conn, const ir::Value& request) = 0;
  // Waits up to timeout_ms for I/O and reports what arrived.
  virtual absl::Status Poll(int timeout_ms, std::vector<AdapterEvent>* events) = 0;
  // Closes one connection without an event (the tester gave up on it); the
  // next request on it opens a new one.
  virtual void Close(int conn) = 0;
  virtual void CloseAll() = 0;
  // Most requests one connection carries at once (0: no limit). The tester
  // sends no more: a request queued behind a stuck one would only become
  // one more request that is never answered when the connection dies.
  virtual int MaxInFlightPerConnection() const { return 0; }
};

// What an adapter needs besides the address.
struct AdapterConfig {
  // grpc: the bytes of a protobuf FileDescriptorSet describing the
  // services (grpc_adapter.h); unused by the other adapters.
  std::string descriptor_set;
  // http: the tester's origin endpoints, for an intermediary's clients
  // (absolute-form targets name them: origin_names.h).
  OriginNames origin_names;
  // fs: the user the program runs as (empty: the tester's own), who then
  // owns the replicas and everything the tester makes in them; giving
  // that away needs root (fs_adapter.h).
  std::string fs_user;
};

// kind: one of kAdapterKinds (adapter_kinds.h). Connection c connects to
// host:ports[c] (IPv4 loopback or any numeric IPv4 address): one port for
// all, or a cluster's nodes (workers/sut/cluster.h).
absl::StatusOr<std::unique_ptr<Adapter>> MakeAdapter(absl::string_view kind, const std::string& host,
                                                     const std::vector<int>& ports, const AdapterConfig& config = {});

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_ADAPTER_H_
