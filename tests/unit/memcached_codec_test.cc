// memcached's text protocol: every command encodes as protocol.txt says,
// bad requests are refused (noreply among them), every reply kind decodes,
// every split decodes like the whole, and garbage or oversize replies are
// reported (naming the bound), never a crash.
#include <string>

#include "engine/ir/json.h"
#include "gtest/gtest.h"
#include "tests/unit/codec_pieces.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {
namespace {

std::string Enc(const std::string& json) {
  auto c = MakeMemcachedCodec();
  auto bytes = c->Encode(*ir::ParseJson(json));
  return bytes.ok() ? *bytes : "REFUSED " + std::string(bytes.status().message());
}

TEST(MemcachedCodec, EncodesEveryCommand) {
  EXPECT_EQ(Enc(R"({"cmd":"get","key":"a"})"), "get a\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"gets","keys":["a","b"]})"), "gets a b\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"set","key":"a","value":"hi"})"), "set a 0 0 2\r\nhi\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"add","key":"a","value":"","flags":7,"exptime":0})"), "add a 7 0 0\r\n\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"cas","key":"a","value":"x y","cas":42})"), "cas a 0 0 3 42\r\nx y\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"append","key":"a","value":"z"})"), "append a 0 0 1\r\nz\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"delete","key":"a"})"), "delete a\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"incr","key":"a","by":5})"), "incr a 5\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"decr","key":"a"})"), "decr a 1\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"touch","key":"a","exptime":10})"), "touch a 10\r\n");
  EXPECT_EQ(Enc(R"({"cmd":"version"})"), "version\r\n");
}

TEST(MemcachedCodec, RefusesWhatTheServerCouldMisread) {
  EXPECT_EQ(Enc(R"({"cmd":"set","key":"a","value":"v","noreply":true})").rfind("REFUSED memcached noreply", 0), 0u);
  EXPECT_EQ(Enc(R"({"cmd":"get","key":"a b"})").rfind("REFUSED", 0), 0u);     // a space splits the key
  EXPECT_EQ(Enc(R"({"cmd":"get","key":"a\r\nb"})").rfind("REFUSED", 0), 0u);  // a line break injects a command
  EXPECT_EQ(Enc(R"({"cmd":"get","key":""})").rfind("REFUSED", 0), 0u);
  EXPECT_EQ(Enc(R"({"cmd":"get","key":")" + std::string(251, 'k') + R"("})").rfind("REFUSED", 0), 0u);
  EXPECT_EQ(Enc(R"({"cmd":"get","keys":[]})").rfind("REFUSED", 0), 0u);
  EXPECT_EQ(Enc(R"({"cmd":"cas","key":"a","value":"v"})").rfind("REFUSED", 0), 0u);  // no unique
  EXPECT_EQ(Enc(R"({"cmd":"incr","key":"a","by":-1})").rfind("REFUSED", 0), 0u);
  EXPECT_EQ(Enc(R"({"cmd":"set","key":"a","value":1})").rfind("REFUSED", 0), 0u);
  EXPECT_EQ(Enc(R"({"cmd":"flush_all"})").rfind("REFUSED unknown memcached cmd", 0), 0u);
  EXPECT_EQ(Enc(R"(["get","a"])").rfind("REFUSED", 0), 0u);
}

const char kEveryReply[] =
    "VALUE a 3 2 17\r\nhi\r\nVALUE b 0 2 18\r\n\r\n\r\nEND\r\n"  // gets: two items (one value holds \r\n)
    "END\r\n"                                                    // a miss
    "STORED\r\nNOT_STORED\r\nEXISTS\r\nNOT_FOUND\r\nDELETED\r\nTOUCHED\r\nERROR\r\n"
    "CLIENT_ERROR bad data chunk\r\nSERVER_ERROR out of memory storing object\r\n"
    "42\r\nVERSION 1.6.18\r\n";

const char kEveryReplyDecoded[] =
    R"({"values":[{"cas":17,"flags":3,"key":"a","value":"hi"},{"cas":18,"flags":0,"key":"b","value":"\r\n"}]})"
    "\n"
    R"({"values":[]})"
    "\n"
    R"({"status":"STORED"})"
    "\n"
    R"({"status":"NOT_STORED"})"
    "\n"
    R"({"status":"EXISTS"})"
    "\n"
    R"({"status":"NOT_FOUND"})"
    "\n"
    R"({"status":"DELETED"})"
    "\n"
    R"({"status":"TOUCHED"})"
    "\n"
    R"({"status":"ERROR"})"
    "\n"
    R"({"message":"bad data chunk","status":"CLIENT_ERROR"})"
    "\n"
    R"({"message":"out of memory storing object","status":"SERVER_ERROR"})"
    "\n"
    R"({"number":42})"
    "\n"
    R"({"version":"1.6.18"})"
    "\n";

TEST(MemcachedCodec, DecodesEveryReplyKind) {
  auto c = MakeMemcachedCodec();
  EXPECT_EQ(DecodeInPieces(*c, kEveryReply, 0), kEveryReplyDecoded);
}

TEST(MemcachedCodec, EverySplitDecodesLikeTheWhole) {
  auto c = MakeMemcachedCodec();
  const std::string bytes = kEveryReply;
  for (size_t piece = 1; piece <= bytes.size(); ++piece)
    ASSERT_EQ(DecodeInPieces(*c, bytes, piece), kEveryReplyDecoded) << "pieces of " << piece;
}

TEST(MemcachedCodec, PartialRepliesWaitForMoreBytes) {
  auto c = MakeMemcachedCodec();
  std::string buf = "VALUE a 0 5\r\nhel";
  std::vector<ir::Value> out;
  DecodeResult r = c->Decode(&buf, false, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(r.malformed.empty());
  buf += "lo\r\nEND\r\nSTO";
  r = c->Decode(&buf, false, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ir::ToJson(out[0]), R"({"values":[{"flags":0,"key":"a","value":"hello"}]})");
  EXPECT_EQ(buf, "STO");
}

TEST(MemcachedCodec, GarbageIsReportedBesideTheReplies) {
  auto c = MakeMemcachedCodec();
  EXPECT_EQ(DecodeInPieces(*c, "STORED\r\nHTTP/1.1 200 OK\r\n", 0),
            "{\"status\":\"STORED\"}\nMALFORMED not a memcached reply line: \"HTTP/1.1 200 OK\"");
  EXPECT_EQ(DecodeInPieces(*c, "VALUE a 0 2\r\nhiXX", 0),
            "MALFORMED a VALUE's 2 data bytes are not followed by \\r\\n");
  EXPECT_EQ(DecodeInPieces(*c, "VALUE a x 2\r\nhi\r\nEND\r\n", 0), "MALFORMED a malformed VALUE line: \"VALUE a x 2\"");
  EXPECT_EQ(DecodeInPieces(*c, "VALUE a 0 2\r\nhi\r\nSTORED\r\n", 0),
            "MALFORMED a retrieval reply has \"STORED\" where VALUE or END belongs");
  EXPECT_EQ(DecodeInPieces(*c, "VALUE a 0 2\r\nhi\r\n", 0), "MALFORMED connection closed inside a reply");
  EXPECT_EQ(DecodeInPieces(*c, "STOR", 0), "MALFORMED connection closed inside a reply");
  EXPECT_EQ(DecodeInPieces(*c, "18446744073709551615\r\n", 0),
            "MALFORMED an incr/decr result 18446744073709551615 above 2^63-1 (limit: integer range)");
}

TEST(MemcachedCodec, OversizedRepliesNameTheirBound) {
  auto c = MakeMemcachedCodec();
  EXPECT_EQ(DecodeInPieces(*c, "VALUE a 0 999999999999\r\n", 0),
            "MALFORMED a VALUE of 999999999999 bytes, more than 16777216 (limit: item bytes)");
  EXPECT_EQ(DecodeInPieces(*c, std::string(9000, 'S'), 1000),
            "MALFORMED a reply line longer than 8192 bytes (limit: line bytes)");
  std::string many;
  for (int i = 0; i < 5000; ++i) many += "VALUE a 0 0\r\n\r\n";
  EXPECT_EQ(DecodeInPieces(*c, many, 0),
            "MALFORMED a retrieval reply with more than 4096 VALUEs (limit: retrieval items)");
}

}  // namespace
}  // namespace dualswarm::workers
