// ds-garbage-server: a broken system under test that answers every
// connection, as soon as it opens and whatever the client sends, with a
// flood of bytes that are no protocol at all (1 MiB per input, bounded).
// Tests use it to check that a tester reports such a server as a finding
// and that nothing upstream (adapter, worker daemon) falls over.
//
// Deliberately standalone, like the reference servers (sut_net.h).
#include <string>

#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-garbage-server [--port N] [--dir D]\n"
    "  answers every connection with 1 MiB of non-protocol bytes per input\n";

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

}  // namespace

int main(int argc, char** argv) {
  dsut::Options opts = dsut::ParseOptionsOrExit(argc, argv, kHelp, 0);
  GarbageHandler handler;
  return dsut::Serve(opts, "ds-garbage-server", handler);
}
