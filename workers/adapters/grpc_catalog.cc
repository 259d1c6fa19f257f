#include "workers/adapters/grpc_catalog.h"

#include <cstdint>
#include <limits>
#include <vector>

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "engine/ir/json.h"

namespace dualswarm::workers {
namespace {

namespace pb = google::protobuf;

ir::Value FieldValue(const pb::Message& m, const pb::FieldDescriptor& f, int index);

ir::Value MessageToIr(const pb::Message& m) {
  const pb::Descriptor& d = *m.GetDescriptor();
  const pb::Reflection& r = *m.GetReflection();
  ir::MapEntries fields;
  for (int i = 0; i < d.field_count(); ++i) {
    const pb::FieldDescriptor& f = *d.field(i);
    if (f.is_repeated()) {
      int n = r.FieldSize(m, &f);
      if (f.is_map()) {
        ir::MapEntries entries;
        for (int k = 0; k < n; ++k) {
          const pb::Message& entry = r.GetRepeatedMessage(m, &f, k);
          const pb::FieldDescriptor& key = *entry.GetDescriptor()->map_key();
          ir::Value key_ir = FieldValue(entry, key, -1);
          std::string key_text = key_ir.is_string() ? key_ir.as_string() : ir::ToJson(key_ir);
          entries.emplace_back(std::move(key_text), FieldValue(entry, *entry.GetDescriptor()->map_value(), -1));
        }
        fields.emplace_back(f.name(), ir::Value::Map(std::move(entries)));
        continue;
      }
      std::vector<ir::Value> items;
      items.reserve(static_cast<size_t>(n));
      for (int k = 0; k < n; ++k) items.push_back(FieldValue(m, f, k));
      fields.emplace_back(f.name(), ir::Value::List(std::move(items)));
      continue;
    }
    if (f.has_presence() && !r.HasField(m, &f)) continue;
    fields.emplace_back(f.name(), FieldValue(m, f, -1));
  }
  return ir::Value::Map(std::move(fields));
}

ir::Value Uint64Value(uint64_t v) {
  if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return ir::Value::Int(static_cast<int64_t>(v));
  return ir::Value::String(absl::StrCat(v));
}

// Field `f` of `m`: element `index` of a repeated field, or the singular
// value (index -1).
ir::Value FieldValue(const pb::Message& m, const pb::FieldDescriptor& f, int index) {
  const pb::Reflection& r = *m.GetReflection();
  bool rep = index >= 0;
  switch (f.cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return ir::Value::Int(rep ? r.GetRepeatedInt32(m, &f, index) : r.GetInt32(m, &f));
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return ir::Value::Int(rep ? r.GetRepeatedInt64(m, &f, index) : r.GetInt64(m, &f));
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return ir::Value::Int(rep ? r.GetRepeatedUInt32(m, &f, index) : r.GetUInt32(m, &f));
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return Uint64Value(rep ? r.GetRepeatedUInt64(m, &f, index) : r.GetUInt64(m, &f));
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return ir::Value::String(absl::StrCat(rep ? r.GetRepeatedDouble(m, &f, index) : r.GetDouble(m, &f)));
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return ir::Value::String(absl::StrCat(rep ? r.GetRepeatedFloat(m, &f, index) : r.GetFloat(m, &f)));
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return ir::Value::Bool(rep ? r.GetRepeatedBool(m, &f, index) : r.GetBool(m, &f));
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      int number = rep ? r.GetRepeatedEnumValue(m, &f, index) : r.GetEnumValue(m, &f);
      const pb::EnumValueDescriptor* v = f.enum_type()->FindValueByNumber(number);
      return v != nullptr ? ir::Value::String(v->name()) : ir::Value::Int(number);
    }
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      std::string s = rep ? r.GetRepeatedString(m, &f, index) : r.GetString(m, &f);
      if (f.type() == pb::FieldDescriptor::TYPE_BYTES) return ir::Value::String(absl::Base64Escape(s));
      return ir::Value::String(std::move(s));
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return MessageToIr(rep ? r.GetRepeatedMessage(m, &f, index) : r.GetMessage(m, &f));
  }
  return ir::Value::Null();
}

// Collects why a file does not build, instead of protobuf logging it.
class BuildErrors : public pb::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& /*filename*/, const std::string& element_name, const pb::Message* /*descriptor*/,
                ErrorLocation /*location*/, const std::string& message) override {
    if (text.size() < 1000) absl::StrAppend(&text, text.empty() ? "" : "; ", element_name, ": ", message);
  }
  std::string text;
};

std::string ServiceNames(const pb::DescriptorPool& pool, const pb::FileDescriptorSet& set) {
  std::vector<std::string> names;
  for (const pb::FileDescriptorProto& file : set.file()) {
    const pb::FileDescriptor* fd = pool.FindFileByName(file.name());
    for (int i = 0; fd != nullptr && i < fd->service_count(); ++i) names.push_back(fd->service(i)->full_name());
  }
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcCatalog>> GrpcCatalog::FromDescriptorSet(absl::string_view descriptor_set) {
  if (descriptor_set.size() > kMaxDescriptorSetBytes)
    return absl::InvalidArgumentError(absl::StrCat("the descriptor set has ", descriptor_set.size(),
                                                   " bytes; the limit is ", kMaxDescriptorSetBytes));
  pb::FileDescriptorSet set;
  if (!set.ParseFromArray(descriptor_set.data(), static_cast<int>(descriptor_set.size())))
    return absl::InvalidArgumentError(
        "the descriptor set is not a google.protobuf.FileDescriptorSet (make it with protoc --descriptor_set_out=FILE "
        "--include_imports)");
  std::unique_ptr<GrpcCatalog> catalog(new GrpcCatalog());
  for (const pb::FileDescriptorProto& file : set.file()) {
    BuildErrors errors;
    if (catalog->pool_.BuildFileCollectingErrors(file, &errors) == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("the descriptor set's file ", file.name(), " does not build (",
                                                     errors.text, "; an import missing? use --include_imports)"));
  }
  catalog->services_ = ServiceNames(catalog->pool_, set);
  return catalog;
}

absl::StatusOr<const pb::MethodDescriptor*> GrpcCatalog::FindUnaryMethod(absl::string_view name) const {
  absl::string_view full = absl::StripPrefix(name, "/");
  size_t slash = full.rfind('/');
  if (slash == absl::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat("method \"", name, "\" is not \"package.Service/Method\""));
  const pb::ServiceDescriptor* service = pool_.FindServiceByName(std::string(full.substr(0, slash)));
  if (service == nullptr)
    return absl::NotFoundError(
        absl::StrCat("no service \"", full.substr(0, slash), "\" in the descriptor set (it has: ", services_, ")"));
  const pb::MethodDescriptor* method = service->FindMethodByName(std::string(full.substr(slash + 1)));
  if (method == nullptr)
    return absl::NotFoundError(
        absl::StrCat("service ", service->full_name(), " has no method \"", full.substr(slash + 1), "\""));
  if (method->client_streaming() || method->server_streaming())
    return absl::InvalidArgumentError(
        absl::StrCat("method ", method->full_name(), " streams; the grpc adapter calls unary methods only"));
  return method;
}

absl::StatusOr<std::string> GrpcCatalog::EncodeRequest(const pb::MethodDescriptor& method,
                                                       const ir::Value& body) const {
  if (!body.is_map())
    return absl::InvalidArgumentError(absl::StrCat("the request of ", method.full_name(),
                                                   " must be a map (its JSON mapping), not ", ir::ToJson(body)));
  std::unique_ptr<pb::Message> msg(factory_.GetPrototype(method.input_type())->New());
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto parsed = pb::util::JsonStringToMessage(ir::ToJson(body), msg.get(), options);
  if (!parsed.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("the request is not a ", method.input_type()->full_name(), ": ", parsed.ToString()));
  std::string bytes;
  if (!msg->SerializeToString(&bytes) || bytes.size() > kMaxGrpcMessageBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("the request of ", method.full_name(), " exceeds ", kMaxGrpcMessageBytes, " bytes"));
  return bytes;
}

absl::StatusOr<ir::Value> GrpcCatalog::DecodeResponse(const pb::MethodDescriptor& method,
                                                      absl::string_view bytes) const {
  std::unique_ptr<pb::Message> msg(factory_.GetPrototype(method.output_type())->New());
  if (bytes.size() > kMaxGrpcMessageBytes || !msg->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return absl::InvalidArgumentError(absl::StrCat("not a valid ", method.output_type()->full_name()));
  return MessageToIr(*msg);
}

}  // namespace dualswarm::workers
