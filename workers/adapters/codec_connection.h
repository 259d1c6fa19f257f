// One non-blocking TCP connection whose bytes a Codec frames: writes queued
// and flushed as the socket takes them, reads decoded as they arrive (at
// most kMaxReadsPerPoll reads per call, so a peer that never stops sending
// cannot hold the caller), and the kernel's arrival time of the first bytes
// read. The client adapter (tcp_adapter.cc) and the origin listener
// (origin_listener.h) keep their connections in these.
#ifndef DUALSWARM_WORKERS_ADAPTERS_CODEC_CONNECTION_H_
#define DUALSWARM_WORKERS_ADAPTERS_CODEC_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/ir/value.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {

struct CodecConnection {
  int fd = -1;
  bool connecting = false;  // a connect() in progress
  std::string out;          // bytes not yet written
  std::string in;           // bytes not yet decoded
  std::unique_ptr<Codec> codec;

  // Writes what the socket takes now (a write error shows on the read side).
  void Flush();
  // Closes the socket and drops what is buffered.
  void Close();

  // What one Read found: complete messages, then maybe why it ended.
  struct ReadResult {
    enum class End { kOpen, kPeerClosed, kError, kMalformed, kCodecClosed };
    std::vector<ir::Value> messages;
    std::string malformed;  // End::kMalformed: why, quoting the bytes
    End end = End::kOpen;
    std::string error;  // End::kError: strerror
    int64_t arrival_ns = 0;
  };
  // Reads what the socket has and decodes it as it arrives (the buffer
  // holds at most one read plus the codec's bounded partial message),
  // stopping at malformed bytes. The caller closes an ended connection.
  ReadResult Read();
};

// Appends what one Read of connection `conn` found as an adapter reports it:
// the messages (kReceived), then, when the connection ended, the malformed
// bytes (kMalformed) and a kClosed saying why, in words naming the `peer`
// ("the server") and its `message` ("response"). True when it ended (the
// caller closes it).
bool AppendReadEvents(int conn, CodecConnection::ReadResult r, absl::string_view peer, absl::string_view message,
                      std::vector<AdapterEvent>* events);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_CODEC_CONNECTION_H_
