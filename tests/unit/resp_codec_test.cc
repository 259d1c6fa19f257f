// RESP2 and RESP3 framing (workers/adapters/resp_codec.cc): commands out as arrays of
// bulk strings, every reply type in as a typed value, pipelined replies in
// order, bytes fed in any split decoded like bytes fed at once, garbage and
// oversize lengths reported out of band with the bytes quoted, every bound
// named.
#include <string>
#include <vector>

#include "engine/ir/json.h"
#include "gtest/gtest.h"
#include "tests/unit/codec_pieces.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

// What the RESP codec makes of `bytes` fed in pieces of `piece` bytes.
std::string DecodeInPieces(const std::string& bytes, size_t piece) {
  return DecodeInPieces(*MakeRespCodec(), bytes, piece);
}

// The whole reply (or garbage) fed at once, and the malformed note with its
// quoted bytes.
std::string Malformed(const std::string& bytes) {
  auto c = MakeRespCodec();
  std::string buf = bytes;
  std::vector<Value> out;
  DecodeResult r = c->Decode(&buf, false, &out);
  EXPECT_TRUE(r.close || r.malformed.empty());
  return r.malformed;
}

TEST(RespCodec, EncodesCommandsAsArraysOfBulkStrings) {
  auto c = MakeRespCodec();
  auto a = c->Encode(*ir::ParseJson(R"({"cmd":["SET","k","v w"]})"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv w\r\n");
  auto b = c->Encode(*ir::ParseJson(R"({"cmd":["INCRBY","k",-12]})"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, "*3\r\n$6\r\nINCRBY\r\n$1\r\nk\r\n$3\r\n-12\r\n");
  auto empty = c->Encode(*ir::ParseJson(R"({"cmd":["SET","k",""]})"));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
  for (const char* bad : {R"({"cmd":[]})", R"({"cmd":"GET"})", R"({"op":"get"})", R"({"cmd":["GET",null]})",
                          R"({"cmd":["GET",["k"]]})", R"(["GET","k"])"}) {
    EXPECT_FALSE(c->Encode(*ir::ParseJson(bad)).ok()) << bad;
  }
}

TEST(RespCodec, DecodesEveryType) {
  EXPECT_EQ(DecodeInPieces("+OK\r\n", 0), "{\"str\":\"OK\"}\n");
  EXPECT_EQ(DecodeInPieces("+\r\n", 0), "{\"str\":\"\"}\n");
  EXPECT_EQ(DecodeInPieces("-ERR value is not an integer or out of range\r\n", 0),
            "{\"err\":\"ERR value is not an integer or out of range\"}\n");
  EXPECT_EQ(DecodeInPieces(":0\r\n:-7\r\n:9223372036854775807\r\n", 0),
            "{\"int\":0}\n{\"int\":-7}\n{\"int\":9223372036854775807}\n");
  EXPECT_EQ(DecodeInPieces("$3\r\nabc\r\n", 0), "{\"bulk\":\"abc\"}\n");
  EXPECT_EQ(DecodeInPieces("$0\r\n\r\n", 0), "{\"bulk\":\"\"}\n");
  EXPECT_EQ(DecodeInPieces("$4\r\na\r\nb\r\n", 0), "{\"bulk\":\"a\\r\\nb\"}\n");  // CRLF inside a bulk string
  EXPECT_EQ(DecodeInPieces("$-1\r\n*-1\r\n", 0), "{\"nil\":true}\n{\"nil\":true}\n");
  EXPECT_EQ(DecodeInPieces("*0\r\n", 0), "{\"arr\":[]}\n");
  EXPECT_EQ(DecodeInPieces("*3\r\n:1\r\n$-1\r\n+x\r\n", 0), "{\"arr\":[{\"int\":1},{\"nil\":true},{\"str\":\"x\"}]}\n");
  EXPECT_EQ(DecodeInPieces("*2\r\n*2\r\n:1\r\n*0\r\n*1\r\n-E\r\n", 0),
            "{\"arr\":[{\"arr\":[{\"int\":1},{\"arr\":[]}]},{\"arr\":[{\"err\":\"E\"}]}]}\n");
}

TEST(RespCodec, PipelinedRepliesComeOutInOrder) {
  auto c = MakeRespCodec();
  std::string buf = "+OK\r\n$1\r\nv\r\n:2\r\n-ERR no\r\n$-1\r\n*1\r\n$1\r\nk\r\n+PART";
  std::vector<Value> out;
  DecodeResult r = c->Decode(&buf, false, &out);
  EXPECT_EQ(r.malformed, "");
  EXPECT_FALSE(r.close);
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(ir::ToJson(out[1]), R"({"bulk":"v"})");
  EXPECT_EQ(ir::ToJson(out[5]), R"({"arr":[{"bulk":"k"}]})");
  EXPECT_EQ(buf, "+PART");  // the unfinished reply waits
  buf += "IAL\r\n";
  out.clear();
  c->Decode(&buf, false, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ir::ToJson(out[0]), R"({"str":"PARTIAL"})");
  EXPECT_EQ(buf, "");
}

TEST(RespCodec, EverySplitDecodesLikeTheWhole) {
  const std::string replies =
      "+OK\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n:42\r\n:-1\r\n"
      "$5\r\nhe\r\no\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n"
      "*3\r\n$1\r\na\r\n*2\r\n:1\r\n*1\r\n+in\r\n$-1\r\n";
  std::string whole = DecodeInPieces(replies, 0);
  EXPECT_EQ(std::count(whole.begin(), whole.end(), '\n'), 10) << whole;
  for (size_t piece = 1; piece <= replies.size(); ++piece) EXPECT_EQ(DecodeInPieces(replies, piece), whole) << piece;
  // Split in two at every byte boundary, too.
  for (size_t cut = 0; cut <= replies.size(); ++cut) {
    auto c = MakeRespCodec();
    std::vector<Value> out;
    std::string buf = replies.substr(0, cut);
    c->Decode(&buf, false, &out);
    buf += replies.substr(cut);
    DecodeResult r = c->Decode(&buf, true, &out);
    EXPECT_EQ(r.malformed, "") << cut;
    std::string log;
    for (const Value& v : out) log += ir::ToJson(v) + "\n";
    EXPECT_EQ(log, whole) << cut;
  }
}

TEST(RespCodec, GarbageIsMalformedWithTheBytesQuoted) {
  std::string m = Malformed("+OK\r\nHTTP/1.1 200 OK\r\n");
  EXPECT_EQ(m, "not a RESP2 type byte (+ - : $ *) (bytes: \"HTTP/1.1 200 OK??\")");
  EXPECT_NE(Malformed(std::string("\x01\xff", 2)).find("(bytes: \"??\")"), std::string::npos);
  EXPECT_EQ(DecodeInPieces(":12x\r\n", 0), "MALFORMED not a 64-bit integer after ':'");
  EXPECT_EQ(DecodeInPieces(":\r\n", 0), "MALFORMED not a 64-bit integer after ':'");
  EXPECT_EQ(DecodeInPieces(":+1\r\n", 0), "MALFORMED not a 64-bit integer after ':'");
  EXPECT_EQ(DecodeInPieces(":99999999999999999999\r\n", 0), "MALFORMED not a 64-bit integer after ':'");
  EXPECT_EQ(DecodeInPieces("$-2\r\n", 0), "MALFORMED not a bulk string length after '$'");
  EXPECT_EQ(DecodeInPieces("$3\r\nabcd\r\n", 0), "MALFORMED a bulk string not followed by CRLF");
  EXPECT_EQ(DecodeInPieces("*x\r\n", 0), "MALFORMED not an array length after '*'");
  EXPECT_EQ(DecodeInPieces("+a\rb\r\n", 0), "MALFORMED a CR or LF inside a simple string or error");
  // Replies before the garbage still count.
  EXPECT_EQ(DecodeInPieces(":1\r\n?\r\n", 0), "{\"int\":1}\nMALFORMED not a RESP2 type byte (+ - : $ *)");
  // Cut off by the peer closing: inside a line, a bulk body, an array.
  EXPECT_EQ(DecodeInPieces("+O", 0), "MALFORMED connection closed inside a reply");
  EXPECT_EQ(DecodeInPieces("$3\r\nab", 0), "MALFORMED connection closed inside a reply");
  EXPECT_EQ(DecodeInPieces("*2\r\n:1\r\n", 0), "MALFORMED connection closed inside a reply");
  // A field named like a tag is data.
  EXPECT_EQ(DecodeInPieces("$9\r\nmalformed\r\n", 0), "{\"bulk\":\"malformed\"}\n");
}

TEST(RespCodec, OversizeLengthsNameTheirBound) {
  EXPECT_EQ(DecodeInPieces("$16777217\r\n", 0), "MALFORMED a bulk string longer than 16777216 bytes");
  EXPECT_EQ(DecodeInPieces("$99999999999\r\n", 0), "MALFORMED a bulk string longer than 16777216 bytes");
  EXPECT_EQ(DecodeInPieces("*1048577\r\n", 0), "MALFORMED an array of more than 1048576 elements");
  // A line with no CRLF: refused once it passes the bound, however it arrives.
  std::string longline = "+" + std::string(64 * 1024 + 10, 'a');
  EXPECT_EQ(DecodeInPieces(longline, 0), "MALFORMED a line longer than 65536 bytes");
  EXPECT_EQ(DecodeInPieces(longline, 1000), "MALFORMED a line longer than 65536 bytes");
  EXPECT_EQ(DecodeInPieces(longline + "\r\n", 0), "MALFORMED a line longer than 65536 bytes");
  // A reply made of many arrays of bulk strings passes the bound on the
  // reply's bytes, not the bound on any one element.
  std::string big = "*1000\r\n";
  std::string element = "$100000\r\n" + std::string(100000, 'x') + "\r\n";
  for (int i = 0; i < 700; ++i) big += element;
  EXPECT_EQ(DecodeInPieces(big, 0), "MALFORMED a reply longer than 67108864 bytes");
  EXPECT_EQ(DecodeInPieces(big, 1 << 20), "MALFORMED a reply longer than 67108864 bytes");
}

TEST(RespCodec, DeepNestingIsRefused) {
  std::string ok, deep;
  for (int i = 0; i < 64; ++i) ok += "*1\r\n";
  ok += ":1\r\n";
  std::string decoded = DecodeInPieces(ok, 0);
  EXPECT_EQ(decoded.find("MALFORMED"), std::string::npos);
  EXPECT_EQ(std::count(decoded.begin(), decoded.end(), '['), 64);
  for (int i = 0; i < 100000; ++i) deep += "*1\r\n";
  EXPECT_EQ(DecodeInPieces(deep, 0), "MALFORMED arrays nested more than 64 deep");
  EXPECT_EQ(DecodeInPieces(deep, 3), "MALFORMED arrays nested more than 64 deep");
}

// What the codec makes of `bytes` on a connection that sent HELLO 3.
std::string DecodeResp3(const std::string& bytes, size_t piece) {
  Value hello = *ir::ParseJson(R"({"cmd":["hello","3"]})");
  return DecodeInPieces(*MakeRespCodec(), bytes, piece, &hello);
}

TEST(RespCodec, DecodesEveryResp3TypeAfterHello3) {
  const std::string replies =
      "_\r\n#t\r\n#f\r\n,1.5\r\n,-inf\r\n(-3492890328409238509324850943850943825024385\r\n"
      "!10\r\nERR x\r\ny z\r\n=8\r\ntxt:a\r\nb\r\n%2\r\n+a\r\n:1\r\n$1\r\nb\r\n_\r\n~2\r\n:1\r\n#t\r\n%0\r\n~0\r\n"
      "*2\r\n%1\r\n:1\r\n~1\r\n:2\r\n:3\r\n";
  const std::string whole =
      "{\"nil\":true}\n{\"bool\":true}\n{\"bool\":false}\n{\"double\":\"1.5\"}\n{\"double\":\"-inf\"}\n"
      "{\"bignum\":\"-3492890328409238509324850943850943825024385\"}\n{\"err\":\"ERR x\\r\\ny z\"}\n"
      "{\"verbatim\":{\"format\":\"txt\",\"text\":\"a\\r\\nb\"}}\n"
      "{\"map\":[[{\"str\":\"a\"},{\"int\":1}],[{\"bulk\":\"b\"},{\"nil\":true}]]}\n"
      "{\"set\":[{\"int\":1},{\"bool\":true}]}\n{\"map\":[]}\n{\"set\":[]}\n"
      "{\"arr\":[{\"map\":[[{\"int\":1},{\"set\":[{\"int\":2}]}]]},{\"int\":3}]}\n";
  EXPECT_EQ(DecodeResp3(replies, 0), whole);
  for (size_t piece = 1; piece <= 7; ++piece) EXPECT_EQ(DecodeResp3(replies, piece), whole) << piece;
  // RESP2 replies stay as they were.
  EXPECT_EQ(DecodeResp3("+OK\r\n$-1\r\n", 0), "{\"str\":\"OK\"}\n{\"nil\":true}\n");
}

TEST(RespCodec, Resp3TypesBeforeHello3AndBadResp3AreMalformed) {
  EXPECT_EQ(DecodeInPieces("#t\r\n", 0), "MALFORMED a RESP3 type byte on a connection that did not send HELLO 3");
  EXPECT_EQ(DecodeInPieces("%1\r\n:1\r\n:2\r\n", 0),
            "MALFORMED a RESP3 type byte on a connection that did not send HELLO 3");
  // A clone is a new connection: it has not sent HELLO 3.
  auto c = MakeRespCodec();
  ASSERT_TRUE(c->Encode(*ir::ParseJson(R"({"cmd":["HELLO",3]})")).ok());
  EXPECT_EQ(DecodeInPieces(*c, "_\r\n", 0), "MALFORMED a RESP3 type byte on a connection that did not send HELLO 3");
  EXPECT_EQ(DecodeResp3(">2\r\n+a\r\n+b\r\n", 0),
            "MALFORMED a RESP3 push message or attribute (not a reply; not supported)");
  EXPECT_EQ(DecodeResp3("|1\r\n+a\r\n+b\r\n", 0),
            "MALFORMED a RESP3 push message or attribute (not a reply; not supported)");
  EXPECT_EQ(DecodeResp3("_x\r\n", 0), "MALFORMED a RESP3 null with data");
  EXPECT_EQ(DecodeResp3("#x\r\n", 0), "MALFORMED a RESP3 boolean that is not t or f");
  EXPECT_EQ(DecodeResp3(",1.5x\r\n", 0), "MALFORMED not a RESP3 double after ','");
  EXPECT_EQ(DecodeResp3("(12a\r\n", 0), "MALFORMED not a RESP3 big number after '('");
  EXPECT_EQ(DecodeResp3("!-1\r\n", 0), "MALFORMED not a blob error length after '!'");
  EXPECT_EQ(DecodeResp3("=3\r\ntxt\r\n", 0), "MALFORMED a RESP3 verbatim string without its 3-byte format and ':'");
  EXPECT_EQ(DecodeResp3("%-1\r\n", 0), "MALFORMED not a map length after '%'");
  EXPECT_EQ(DecodeResp3("~1048577\r\n", 0), "MALFORMED a set of more than 1048576 elements");
  std::string deep;
  for (int i = 0; i < 1000; ++i) deep += "%1\r\n";
  EXPECT_EQ(DecodeResp3(deep, 0), "MALFORMED arrays nested more than 64 deep");
  EXPECT_EQ(DecodeResp3("%1\r\n:1\r\n", 0), "MALFORMED connection closed inside a reply");
}

TEST(RespCodec, ACloneStartsClean) {
  auto c = MakeRespCodec();
  std::string buf = "*2\r\n:1\r\n";
  std::vector<Value> out;
  c->Decode(&buf, false, &out);
  auto fresh = c->Clone();
  buf = ":5\r\n";
  fresh->Decode(&buf, false, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ir::ToJson(out[0]), R"({"int":5})");
}

}  // namespace
}  // namespace dualswarm::workers
