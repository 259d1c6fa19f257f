#include "workers/adapters/codec_connection.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <ctime>

#include "absl/strings/str_cat.h"

namespace dualswarm::workers {
namespace {

constexpr int kMaxReadsPerPoll = 64;  // × 64 KiB

// recv() that also reports the kernel's receive time of the data, when
// the socket has SO_TIMESTAMPNS and the kernel provides it.
ssize_t RecvStamped(int fd, char* buf, size_t len, int64_t* arrival_ns) {
  iovec iov{buf, len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t r = ::recvmsg(fd, &msg, 0);
  if (r <= 0 || arrival_ns == nullptr) return r;
  for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(cm), sizeof ts);
      *arrival_ns = static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }
  }
  return r;
}

}  // namespace

void CodecConnection::Flush() {
  if (connecting || fd < 0) return;
  while (!out.empty()) {
    ssize_t w = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (w > 0) {
      out.erase(0, static_cast<size_t>(w));
      continue;
    }
    return;  // would block (the next POLLOUT goes on), or an error the read side reports
  }
}

void CodecConnection::Close() {
  if (fd >= 0) ::close(fd);
  fd = -1;
  connecting = false;
  out.clear();
  in.clear();
}

CodecConnection::ReadResult CodecConnection::Read() {
  ReadResult result;
  char buf[65536];
  for (int reads = 0; reads < kMaxReadsPerPoll; ++reads) {
    bool eof = false;
    ssize_t r = RecvStamped(fd, buf, sizeof buf, result.arrival_ns == 0 ? &result.arrival_ns : nullptr);
    if (r > 0) {
      in.append(buf, static_cast<size_t>(r));
    } else if (r == 0) {
      eof = true;
      result.end = ReadResult::End::kPeerClosed;
    } else if (errno == EINTR) {
      continue;  // counts as a read: a signal storm cannot keep us here either
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      eof = true;
      result.end = ReadResult::End::kError;
      result.error = std::strerror(errno);
    }
    DecodeResult decoded = codec->Decode(&in, eof, &result.messages);
    if (!decoded.malformed.empty()) {
      result.malformed = std::move(decoded.malformed);
      result.end = ReadResult::End::kMalformed;
    } else if (decoded.close && result.end == ReadResult::End::kOpen) {
      result.end = ReadResult::End::kCodecClosed;
    }
    if (eof || decoded.close || r < 0) return result;  // ended, or nothing more to read now
  }
  return result;
}

bool AppendReadEvents(int conn, CodecConnection::ReadResult r, absl::string_view peer, absl::string_view message,
                      std::vector<AdapterEvent>* events) {
  for (auto& m : r.messages) events->push_back({AdapterEvent::Kind::kReceived, conn, std::move(m), "", r.arrival_ns});
  using End = CodecConnection::ReadResult::End;
  std::string why;
  switch (r.end) {
    case End::kOpen:
      return false;
    case End::kPeerClosed:
      why = absl::StrCat("closed by ", peer);
      break;
    case End::kError:
      why = r.error;
      break;
    case End::kMalformed:
      events->push_back({AdapterEvent::Kind::kMalformed, conn, ir::Value(), std::move(r.malformed), r.arrival_ns});
      why = absl::StrCat("unparseable ", message);
      break;
    case End::kCodecClosed:
      why = absl::StrCat("the ", message, " ended the connection");
      break;
  }
  events->push_back({AdapterEvent::Kind::kClosed, conn, ir::Value(), std::move(why), r.arrival_ns});
  return true;
}

}  // namespace dualswarm::workers
