// The origin listener (workers/adapters/origin_listener.h) over real
// loopback sockets: a stand-in for the SUT connects to its ports as an
// intermediary would, sends requests as JSON lines and reads the answers.
#include "workers/adapters/origin_listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/ir/json.h"
#include "gtest/gtest.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

// A blocking client socket connected to 127.0.0.1:port (the SUT's side).
int ConnectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  timeval tv{5, 0};  // a read that waits longer has failed
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

void Write(int fd, const std::string& bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

// Reads one line (without the newline); "" on EOF, "error: ..." on an error.
std::string ReadLine(int fd) {
  std::string line;
  char ch;
  while (true) {
    ssize_t r = ::recv(fd, &ch, 1, 0);
    if (r == 0) return line;
    if (r < 0) return std::string("error: ") + std::strerror(errno);
    if (ch == '\n') return line;
    line += ch;
  }
}

// Polls until `want` events have come (at most 5 s).
std::vector<AdapterEvent> PollFor(OriginListener& l, size_t want) {
  std::vector<AdapterEvent> events;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (events.size() < want && std::chrono::steady_clock::now() < until) EXPECT_TRUE(l.Poll(10, &events).ok());
  return events;
}

Value Json(const std::string& text) {
  auto v = ir::ParseJson(text);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Value();
}

TEST(OriginListener, AcceptsNumbersAndNamesRequestsAndWritesAnswersBack) {
  auto l = OriginListener::Create(2, [] { return MakeJsonLinesCodec(); });
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ((*l)->ports().size(), 2u);
  EXPECT_NE((*l)->ports()[0], (*l)->ports()[1]);
  const int a = ConnectTo((*l)->ports()[1]);
  Write(a, "{\"op\":\"get\",\"id\":\"x\"}\n{\"op\":\"put\"}\n");
  std::vector<AdapterEvent> ev = PollFor(**l, 2);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, AdapterEvent::Kind::kReceived);
  EXPECT_EQ(ev[0].conn, 0);
  EXPECT_EQ(ev[0].msg, Json("{\"op\":\"get\",\"id\":\"x\",\"origin\":\"origin-1\"}"));
  EXPECT_EQ(ev[1].msg, Json("{\"op\":\"put\",\"origin\":\"origin-1\"}"));
  ASSERT_TRUE((*l)->Answer(0, Json("{\"v\":\"one\"}")).ok());
  EXPECT_EQ(ReadLine(a), "{\"v\":\"one\"}");
  // A second connection, to the other endpoint, is origin connection 1.
  const int b = ConnectTo((*l)->ports()[0]);
  Write(b, "{\"op\":\"get\"}\n");
  ev = PollFor(**l, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].conn, 1);
  EXPECT_EQ(ev[0].msg.Find("origin")->as_string(), "origin-0");
  EXPECT_EQ((*l)->connections(), 2u);
  // The SUT closes the first: reported, and no more answers there.
  ::close(a);
  ev = PollFor(**l, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AdapterEvent::Kind::kClosed);
  EXPECT_EQ(ev[0].conn, 0);
  EXPECT_EQ(ev[0].note, "closed by the SUT");
  EXPECT_EQ((*l)->Answer(0, Json("{}")).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*l)->Answer(7, Json("{}")).code(), absl::StatusCode::kInvalidArgument);
  ::close(b);
}

TEST(OriginListener, BytesThatAreNotARequestAreMalformedThenClosed) {
  auto l = OriginListener::Create(1, [] { return MakeJsonLinesCodec(); });
  ASSERT_TRUE(l.ok()) << l.status();
  const int a = ConnectTo((*l)->ports()[0]);
  Write(a, "{\"ok\":1}\nnot json\n");
  std::vector<AdapterEvent> ev = PollFor(**l, 3);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].kind, AdapterEvent::Kind::kReceived);
  EXPECT_EQ(ev[1].kind, AdapterEvent::Kind::kMalformed);
  EXPECT_TRUE(absl::StrContains(ev[1].note, "not JSON")) << ev[1].note;
  EXPECT_EQ(ev[2].kind, AdapterEvent::Kind::kClosed);
  EXPECT_EQ(ev[2].note, "unparseable request");
  EXPECT_EQ(ReadLine(a), "");  // the tester closed it
  ::close(a);
}

TEST(OriginListener, AbortsCloseAfterWhatIsQueuedOrResetAtOnce) {
  auto l = OriginListener::Create(1, [] { return MakeJsonLinesCodec(); });
  ASSERT_TRUE(l.ok()) << l.status();
  const int a = ConnectTo((*l)->ports()[0]);
  const int b = ConnectTo((*l)->ports()[0]);
  Write(a, "{\"n\":1}\n{\"n\":2}\n");
  Write(b, "{\"n\":3}\n");
  ASSERT_EQ(PollFor(**l, 3).size(), 3u);
  // a is origin connection 0 (accepted first), b is 1.
  ASSERT_TRUE((*l)->Answer(0, Json("{\"v\":\"first\"}")).ok());
  ASSERT_TRUE((*l)->Answer(0, Json("{\"abort\":\"close\"}")).ok());
  ASSERT_TRUE((*l)->Answer(1, Json("{\"abort\":\"reset\"}")).ok());
  EXPECT_EQ((*l)->Answer(0, Json("{}")).code(), absl::StatusCode::kFailedPrecondition);
  std::vector<AdapterEvent> ev = PollFor(**l, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AdapterEvent::Kind::kClosed);
  EXPECT_EQ(ev[0].conn, 1);
  EXPECT_TRUE(absl::StartsWith(ReadLine(b), "error: Connection reset")) << "b was not reset";
  // a gets its answer, then FIN; what it sends after that is still read,
  // and its own close ends the connection.
  EXPECT_EQ(ReadLine(a), "{\"v\":\"first\"}");
  EXPECT_EQ(ReadLine(a), "");
  Write(a, "{\"n\":4}\n");
  ::close(a);
  ev = PollFor(**l, 2);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, AdapterEvent::Kind::kReceived);
  EXPECT_EQ(ev[0].conn, 0);
  EXPECT_EQ(ev[1].kind, AdapterEvent::Kind::kClosed);
  EXPECT_EQ(ev[1].note, "closed by the SUT after the tester's abort");
  ::close(b);
}

// {"abort":"silence"}: nothing is written, then or later (later answers
// are refused as on a closed connection), the connection stays open and
// counts as silent until the SUT closes it.
TEST(OriginListener, ASilentConnectionWritesNothingAndStaysOpenUntilTheSutCloses) {
  auto l = OriginListener::Create(1, [] { return MakeJsonLinesCodec(); });
  ASSERT_TRUE(l.ok()) << l.status();
  const int a = ConnectTo((*l)->ports()[0]);
  Write(a, "{\"n\":1}\n{\"n\":2}\n");
  ASSERT_EQ(PollFor(**l, 2).size(), 2u);
  EXPECT_EQ((*l)->SilentOpen(), 0u);
  ASSERT_TRUE((*l)->Answer(0, Json("{\"abort\":\"silence\"}")).ok());
  EXPECT_EQ((*l)->SilentOpen(), 1u);
  EXPECT_EQ((*l)->Answer(0, Json("{\"v\":\"late\"}")).code(), absl::StatusCode::kFailedPrecondition);
  timeval short_wait{0, 200'000};
  ::setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &short_wait, sizeof short_wait);
  const std::string read = ReadLine(a);
  EXPECT_TRUE(absl::StartsWith(read, "error: ")) << "the SUT read \"" << read << "\" from a silent origin";
  std::vector<AdapterEvent> none;
  ASSERT_TRUE((*l)->Poll(100, &none).ok());
  EXPECT_TRUE(none.empty()) << "a silent connection stays open";
  EXPECT_EQ((*l)->SilentOpen(), 1u);
  ::close(a);  // the SUT gives up
  std::vector<AdapterEvent> ev = PollFor(**l, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AdapterEvent::Kind::kClosed);
  EXPECT_EQ((*l)->SilentOpen(), 0u);
}

TEST(OriginListener, EndpointsAreBounded) {
  EXPECT_EQ(OriginListener::Create(0, [] { return MakeJsonLinesCodec(); }).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OriginListener::Create(kMaxOriginEndpoints + 1, [] { return MakeJsonLinesCodec(); }).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dualswarm::workers
