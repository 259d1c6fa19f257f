// ds-garbage-server: systems under test that send what a tester must
// survive. --mutant chooses what:
//   0  answers every connection, as soon as it opens and whatever the
//      client sends, with a flood of bytes that are no protocol at all
//      (1 MiB per input, bounded);
//   1  a CORRECT JSON-lines server whose every reply is
//      {"malformed":"no","ok":true}: a field name is data, never an error
//      signal;
//   2  HTTP: answers every request with a chunked response whose trailer
//      section never ends (4 MiB of trailer fields per request, bounded).
// Tests use it to check that a tester reports such a server as a finding
// (or, for 1, not), and that nothing upstream (adapter, worker daemon)
// falls over or grows without bound.
//
// Deliberately standalone, like the reference servers (sut_net.h).
#include <string>

#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-garbage-server [--port N] [--dir D] [--mutant 0|1|2]\n"
    "  0: answers every connection with 1 MiB of non-protocol bytes per input\n"
    "  1: answers every JSON line with {\"malformed\":\"no\",\"ok\":true} (a correct server)\n"
    "  2: answers every HTTP request with a chunked response whose trailers never end\n";

class GarbageHandler : public dsut::Handler {
 public:
  void OnOpen(dsut::Conn& c) override { Flood(c); }
  void OnInput(dsut::Conn& c) override {
    c.in.clear();
    if (!c.peer_eof) Flood(c);
  }

 private:
  void Flood(dsut::Conn& c) {
    if (c.out.size() - c.out_pos > (4u << 20)) return;  // bounded backlog
    std::string junk;
    junk.reserve(1 << 20);
    uint32_t x = 2463534242u;
    while (junk.size() < (1u << 20)) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      junk.push_back(static_cast<char>(x & 0xff));
    }
    c.out += junk;
  }
};

// Mutant 1: one reply per input line.
class MalformedFieldHandler : public dsut::Handler {
 public:
  void OnInput(dsut::Conn& c) override {
    size_t nl;
    while ((nl = c.in.find('\n')) != std::string::npos) {
      c.in.erase(0, nl + 1);
      c.out += "{\"malformed\":\"no\",\"ok\":true}\n";
    }
  }
};

// Mutant 2: for each request head, a response that never ends.
class EndlessTrailersHandler : public dsut::Handler {
 public:
  void OnInput(dsut::Conn& c) override {
    size_t end;
    while ((end = c.in.find("\r\n\r\n")) != std::string::npos) {
      c.in.erase(0, end + 4);
      if (c.out.size() - c.out_pos > (4u << 20)) continue;  // bounded backlog
      c.out += "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n";
      for (size_t n = 0; n < (4u << 20); n += 38) c.out += "x-trailer: 0123456789012345678901234\r\n";
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  dsut::Options opts = dsut::ParseOptionsOrExit(argc, argv, kHelp, 2);
  GarbageHandler garbage;
  MalformedFieldHandler malformed_field;
  EndlessTrailersHandler endless_trailers;
  dsut::Handler* handlers[] = {&garbage, &malformed_field, &endless_trailers};
  return dsut::Serve(opts, "ds-garbage-server", *handlers[opts.mutant]);
}
