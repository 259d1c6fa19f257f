// OriginListener: the tester playing an intermediary's origin servers
// (docs/design/intermediaries.md). It binds loopback ports before the SUT
// is launched (so their numbers go into the launch template), accepts the
// connections the SUT opens to them, frames what the SUT sends with a codec
// whose directions are flipped (it decodes requests and encodes answers;
// for JSON lines that is the clients' codec itself), adds the endpoint's
// logical name to each request ("origin": "origin-K"), and writes the
// tester's answers back. Origin connections are numbered in accept order
// and never reused.
//
// Bounds: at most kMaxOriginConnections accepted over its life (one more is
// a ResourceExhausted error naming the bound, never a finding); buffers as
// the codec bounds them.
#ifndef DUALSWARM_WORKERS_ADAPTERS_ORIGIN_LISTENER_H_
#define DUALSWARM_WORKERS_ADAPTERS_ORIGIN_LISTENER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/ir/value.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/codec_connection.h"

namespace dualswarm::workers {

constexpr int kMaxOriginEndpoints = 16;
constexpr size_t kMaxOriginConnections = 16384;

class OriginListener {
 public:
  // `endpoints` listening sockets on 127.0.0.1, each on a port the kernel
  // picks; make_codec gives each accepted connection its codec.
  static absl::StatusOr<std::unique_ptr<OriginListener>> Create(int endpoints,
                                                                std::function<std::unique_ptr<Codec>()> make_codec);
  ~OriginListener();
  OriginListener(const OriginListener&) = delete;
  OriginListener& operator=(const OriginListener&) = delete;

  // Endpoint K's port, K = 0 .. endpoints-1.
  const std::vector<int>& ports() const { return ports_; }
  // The logical name of endpoint K, which requests carry: "origin-K".
  static std::string EndpointName(int k);

  // Waits up to timeout_ms for I/O and reports what happened, as
  // Adapter::Poll does for responses: kReceived (a request the SUT sent;
  // `conn` is the origin connection), kMalformed (bytes that are not a
  // request; a kClosed follows), kClosed (the SUT closed it, or the tester
  // aborted it).
  absl::Status Poll(int timeout_ms, std::vector<AdapterEvent>* events);

  // Writes the tester's answer on origin connection `conn`, or aborts it:
  // {"abort": "close"} shuts its sending side once what is queued is
  // written (FIN; requests the SUT sent meanwhile are still reported, and
  // the close when the SUT closes too), {"abort": "reset"} resets it at
  // once (RST), {"abort": "silence"} writes nothing, then or ever, and
  // leaves the connection open: the origin stopped answering, and the SUT
  // must give up on it by itself (a gateway's 504: RFC 9110 §15.6.5).
  // FailedPrecondition when it is closed, aborted or silent;
  // InvalidArgument when it never existed.
  absl::Status Answer(int conn, const ir::Value& answer);

  // Origin connections accepted so far.
  size_t connections() const { return conns_.size(); }
  // Silent origin connections the SUT has not closed yet: while there is
  // one, the SUT may be waiting on the tester (its liveness is not judged).
  size_t SilentOpen();
  // Closes (FIN) the silent connections that have been silent for `limit`
  // or longer: an origin is not silent for ever, so neither is the wait.
  void EndSilencesOlderThan(std::chrono::milliseconds limit);

 private:
  struct OriginConn : CodecConnection {
    int endpoint = 0;
    bool close_after_write = false;  // an abort "close": FIN once the queued bytes are written
    bool write_shut = false;         // that FIN was sent; reading goes on until the SUT closes too
    bool silent = false;             // an abort "silence": nothing more is written
  };
  OriginListener(std::vector<int> listen_fds, std::vector<int> ports,
                 std::function<std::unique_ptr<Codec>()> make_codec)
      : listen_fds_(std::move(listen_fds)), ports_(std::move(ports)), make_codec_(std::move(make_codec)) {}
  absl::Status Accept(int endpoint);
  void ReadFrom(int conn, std::vector<AdapterEvent>* events);
  void Flush(int conn);
  void Drop(int conn, std::string why);

  std::vector<int> listen_fds_;  // per endpoint
  std::vector<int> ports_;       // per endpoint
  std::function<std::unique_ptr<Codec>()> make_codec_;
  std::vector<OriginConn> conns_;      // by origin connection number
  std::vector<AdapterEvent> pending_;  // closes the tester caused, reported by the next Poll
  struct Silence {
    int conn;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<Silence> silent_;  // silent connections, some maybe closed since (SilentOpen)
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_ORIGIN_LISTENER_H_
