// GrpcCatalog (workers/adapters/grpc_catalog.h): the descriptor set of
// specs/etcd_kv.proto, built by protoc as a user builds it, and the IR of
// requests and responses against wire bytes written out by hand.
#include "workers/adapters/grpc_catalog.h"

#include <google/protobuf/descriptor.pb.h>

#include <string>

#include "engine/ir/json.h"
#include "gtest/gtest.h"
#include "util/file_tail.h"

namespace dualswarm::workers {
namespace {

std::unique_ptr<GrpcCatalog> Etcd() {
  auto bytes = util::ReadFileTail(DS_ETCD_DESCRIPTOR_SET, kMaxDescriptorSetBytes);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  auto catalog = GrpcCatalog::FromDescriptorSet(*bytes);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return *std::move(catalog);
}

ir::Value Json(const std::string& text) {
  auto v = ir::ParseJson(text);
  EXPECT_TRUE(v.ok()) << v.status();
  return *v;
}

TEST(GrpcCatalog, FindsUnaryMethodsByFullName) {
  auto etcd = Etcd();
  auto put = etcd->FindUnaryMethod("etcdserverpb.KV/Put");
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ((*put)->input_type()->full_name(), "etcdserverpb.PutRequest");
  EXPECT_TRUE(etcd->FindUnaryMethod("/etcdserverpb.KV/Range").ok());

  auto no_service = etcd->FindUnaryMethod("etcdserverpb.Watch/Watch");
  EXPECT_TRUE(absl::IsNotFound(no_service.status()));
  EXPECT_NE(no_service.status().message().find("it has: etcdserverpb.KV"), std::string::npos) << no_service.status();
  EXPECT_TRUE(absl::IsNotFound(etcd->FindUnaryMethod("etcdserverpb.KV/Compact").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(etcd->FindUnaryMethod("Put").status()));
}

TEST(GrpcCatalog, RefusesWhatIsNotADescriptorSet) {
  EXPECT_TRUE(absl::IsInvalidArgument(GrpcCatalog::FromDescriptorSet("\xff\xff\xff garbage").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(GrpcCatalog::FromDescriptorSet(std::string(kMaxDescriptorSetBytes + 1, '\0')).status()));
}

// A set made without --include_imports: the file that imports a missing
// one is named, with protobuf's reason (collected, not logged).
TEST(GrpcCatalog, NamesTheFileThatDoesNotBuild) {
  google::protobuf::FileDescriptorSet set;
  google::protobuf::FileDescriptorProto* file = set.add_file();
  file->set_name("svc.proto");
  file->add_dependency("google/protobuf/empty.proto");
  std::string bytes;
  ASSERT_TRUE(set.SerializeToString(&bytes));
  auto catalog = GrpcCatalog::FromDescriptorSet(bytes);
  EXPECT_TRUE(absl::IsInvalidArgument(catalog.status()));
  EXPECT_NE(catalog.status().message().find("file svc.proto does not build"), std::string::npos) << catalog.status();
  EXPECT_NE(catalog.status().message().find("google/protobuf/empty.proto"), std::string::npos) << catalog.status();
}

TEST(GrpcCatalog, EncodesTheJsonMappingOfARequest) {
  auto etcd = Etcd();
  auto put = *etcd->FindUnaryMethod("etcdserverpb.KV/Put");
  // key "a" (field 1), value "v1" (field 2), prev_kv true (field 4): the
  // bytes fields in base64, as protobuf's JSON mapping has them.
  auto bytes = etcd->EncodeRequest(*put, Json(R"({"key":"YQ==","value":"djE=","prev_kv":true})"));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, std::string("\x0a\x01"
                                "a"
                                "\x12\x02"
                                "v1"
                                "\x20\x01",
                                9));
  // lowerCamelCase names and enum names, as the mapping allows.
  auto txn = *etcd->FindUnaryMethod("etcdserverpb.KV/Txn");
  auto t = etcd->EncodeRequest(*txn, Json(R"({"compare":[{"target":"MOD","key":"YQ==","modRevision":7}]})"));
  ASSERT_TRUE(t.ok()) << t.status();
  // compare (field 1, 7 bytes): target MOD=2 (field 2), key (field 3), mod_revision 7 (field 6).
  EXPECT_EQ(*t, std::string("\x0a\x07\x10\x02\x1a\x01"
                            "a"
                            "\x30\x07",
                            9));
}

TEST(GrpcCatalog, RefusesRequestsThatAreNotTheMethodsMessage) {
  auto etcd = Etcd();
  auto put = *etcd->FindUnaryMethod("etcdserverpb.KV/Put");
  EXPECT_TRUE(absl::IsInvalidArgument(etcd->EncodeRequest(*put, Json(R"({"nokey":"YQ=="})")).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(etcd->EncodeRequest(*put, Json(R"({"key":5})")).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(etcd->EncodeRequest(*put, Json(R"(["YQ=="])")).status()));
}

TEST(GrpcCatalog, DecodesAResponseWithEveryFieldAndIntsAsInts) {
  auto etcd = Etcd();
  auto range = *etcd->FindUnaryMethod("etcdserverpb.KV/Range");
  // header {revision 5, cluster_id 2^64-1}, kvs [{key "a", value "v1",
  // mod_revision 5, version 2}], count 1.
  std::string header = std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x18\x05", 13);
  std::string kv = std::string(
      "\x0a\x01"
      "a"
      "\x18\x05\x20\x02\x2a\x02"
      "v1",
      11);
  std::string bytes = std::string("\x0a") + char(header.size()) + header + "\x12" + char(kv.size()) + kv + "\x20\x01";
  auto v = etcd->DecodeResponse(*range, bytes);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ir::ToJson(*v),
            R"({"count":1,"header":{"cluster_id":"18446744073709551615","member_id":0,"raft_term":0,"revision":5},)"
            R"("kvs":[{"create_revision":0,"key":"YQ==","lease":0,"mod_revision":5,"value":"djE=","version":2}],)"
            R"("more":false})");
}

TEST(GrpcCatalog, LeavesOutUnsetMessagesAndOneofMembers) {
  auto etcd = Etcd();
  auto put = *etcd->FindUnaryMethod("etcdserverpb.KV/Put");
  auto v = etcd->DecodeResponse(*put, "");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ir::ToJson(*v), "{}");  // neither header nor prev_kv
  auto txn = *etcd->FindUnaryMethod("etcdserverpb.KV/Txn");
  // responses [{response_put {}}]: the one member of the oneof that is set.
  auto t = etcd->DecodeResponse(*txn, std::string("\x10\x01\x1a\x02\x12\x00", 6));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(ir::ToJson(*t), R"({"responses":[{"response_put":{}}],"succeeded":true})");
}

TEST(GrpcCatalog, RefusesBytesThatAreNotTheResponseMessage) {
  auto etcd = Etcd();
  auto range = *etcd->FindUnaryMethod("etcdserverpb.KV/Range");
  auto v = etcd->DecodeResponse(*range, "\x0a\x10short");  // a length past the end
  EXPECT_TRUE(absl::IsInvalidArgument(v.status()));
  EXPECT_NE(v.status().message().find("etcdserverpb.RangeResponse"), std::string::npos) << v.status();
}

}  // namespace
}  // namespace dualswarm::workers
