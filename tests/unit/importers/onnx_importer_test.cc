// The ONNX importer's rules and errors, on the fixtures and on small models
// built here with the protobuf API.

#include "importers/onnx/onnx_importer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "ir/printer.h"
#include "onnx/onnx_pb.h"
#include "testing/test_util.h"

namespace distir::onnx_import {
namespace {

using ::distir::testing::SourcePath;
using ::distir::testing::StatusIs;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// y = OP(x) on a [2, 3] float input x, at `opset`.
onnx::ModelProto UnaryModel(const std::string& op, int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  onnx::OperatorSetIdProto* id = m.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  onnx::ValueInfoProto* x = g->add_input();
  x->set_name("x");
  onnx::TypeProto_Tensor* t = x->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim()->set_dim_value(3);
  onnx::NodeProto* n = g->add_node();
  n->set_name("the_node");
  n->set_op_type(op);
  n->add_input("x");
  n->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

StatusOr<ImportedModel> Import(const onnx::ModelProto& m, ImportOptions o = {}) {
  if (o.input_shapes.empty()) o.input_shapes["x"] = {2, 3};
  return ImportOnnx(m.SerializeAsString(), "test.onnx", o);
}

TEST(OnnxImporterTest, ImportsOneNode) {
  ASSERT_OK_AND_ASSIGN(ImportedModel m, Import(UnaryModel("Relu", 17)));
  EXPECT_EQ(PrintModule(m.module),
            "func @test(%x: tensor<2x3xf32, d0>) {\n"
            "  %y = Relu(%x) : tensor<2x3xf32, d0>\n"
            "  return %y\n"
            "}\n");
  EXPECT_EQ(m.inputs, std::vector<std::string>{"x"});
}

TEST(OnnxImporterTest, ImportsTheLlamaActivationsAndRotaryOps) {
  // SiLU is exported as Mul(x, Sigmoid(x)); rotary embeddings take Cos and Sin.
  for (const char* op : {"Sigmoid", "Sin", "Cos"}) {
    for (int64_t opset : {13, 17}) {
      SCOPED_TRACE(std::string(op) + " at opset " + std::to_string(opset));
      ASSERT_OK_AND_ASSIGN(ImportedModel m, Import(UnaryModel(op, opset)));
      EXPECT_EQ(PrintModule(m.module),
                "func @test(%x: tensor<2x3xf32, d0>) {\n  %y = " + std::string(op) +
                    "(%x) : tensor<2x3xf32, d0>\n  return %y\n}\n");
    }
  }
}

TEST(OnnxImporterTest, UnsupportedOpNamesNodeOpTypeOpsetAndTheSupportedOps) {
  StatusOr<ImportedModel> m = Import(UnaryModel("Conv", 16));
  EXPECT_THAT(m, StatusIs(StatusCode::kUnimplemented, "ONNX op Conv (opset 16) is not supported"));
  EXPECT_THAT(m, StatusIs(StatusCode::kUnimplemented, "supported ops: Add, Cast, Concat"));
  EXPECT_EQ(m.status().loc().ToString(), "test.onnx: node 'the_node' (Conv)");
}

TEST(OnnxImporterTest, OpOfAnotherDomainIsUnsupported) {
  onnx::ModelProto model = UnaryModel("Relu", 17);
  model.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  EXPECT_THAT(Import(model), StatusIs(StatusCode::kUnimplemented, "of domain 'com.microsoft'"));
}

TEST(OnnxImporterTest, OpsetOutsideThirteenToSeventeenIsAnError) {
  EXPECT_THAT(Import(UnaryModel("Relu", 11)),
              StatusIs(StatusCode::kInvalidArgument, "opset 11 of the default ONNX domain"));
  EXPECT_THAT(Import(UnaryModel("Relu", 18)),
              StatusIs(StatusCode::kInvalidArgument, "reads opsets 13 to 17"));
}

TEST(OnnxImporterTest, UnboundDynamicDimensionNamesTheInputAndTheDimension) {
  ImportOptions o;
  o.input_shapes["unused"] = {1};
  EXPECT_THAT(Import(UnaryModel("Relu", 17), o),
              StatusIs(StatusCode::kInvalidArgument, "no data input named 'unused' (inputs: x)"));
  StatusOr<ImportedModel> m = ImportOnnx(UnaryModel("Relu", 17).SerializeAsString(), "t.onnx");
  EXPECT_THAT(m, StatusIs(StatusCode::kInvalidArgument,
                          "input 'x' has dynamic dimension 'batch' at axis 0 of [?x3]"));
}

TEST(OnnxImporterTest, BindingMustAgreeWithDeclaredShape) {
  ImportOptions o;
  o.input_shapes["x"] = {2, 4};
  EXPECT_THAT(Import(UnaryModel("Relu", 17), o),
              StatusIs(StatusCode::kInvalidArgument, "declared static extent 3 at axis 1"));
  o.input_shapes["x"] = {2};
  EXPECT_THAT(Import(UnaryModel("Relu", 17), o), StatusIs(StatusCode::kInvalidArgument, "rank 1"));
}

TEST(OnnxImporterTest, UndefinedInputAndUnsupportedAttributeAreErrors) {
  onnx::ModelProto model = UnaryModel("Relu", 17);
  model.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  EXPECT_THAT(Import(model), StatusIs(StatusCode::kInvalidArgument,
                                      "input 'nowhere' is not defined before the node"));
  model = UnaryModel("Softmax", 17);
  onnx::AttributeProto* a = model.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("last");
  EXPECT_THAT(Import(model), StatusIs(StatusCode::kInvalidArgument,
                                      "attribute 'axis' of Softmax must be INT, got STRING"));
}

TEST(OnnxImporterTest, TruncatedOrForeignBytesAreAClearError) {
  const std::string bytes = ReadBytes(SourcePath("data/onnx/mlp.onnx"));
  ASSERT_GT(bytes.size(), 100u);
  EXPECT_THAT(ImportOnnx(bytes.substr(0, bytes.size() / 2), "cut.onnx"),
              StatusIs(StatusCode::kInvalidArgument, "not a valid ONNX model"));
  EXPECT_THAT(ImportOnnx("func @f() { return }", "text.onnx"),
              StatusIs(StatusCode::kInvalidArgument, "not a valid ONNX model"));
  EXPECT_THAT(ImportOnnxFile(SourcePath("data/onnx/no-such-file.onnx")),
              StatusIs(StatusCode::kNotFound, "cannot open"));
}

// Torch deduplicates the MLP's zero biases: net.2.bias = Identity(net.0.bias).
// The Identity is folded, so the second Gemm reads the parameter net.0.bias.
TEST(OnnxImporterTest, IdentityOfDeduplicatedInitializerIsFolded) {
  ImportOptions o;
  o.input_shapes["x"] = {4, 16};
  ASSERT_OK_AND_ASSIGN(ImportedModel m, ImportOnnxFile(SourcePath("data/onnx/mlp.onnx"), o));
  const Function& fn = *m.module.entry();
  EXPECT_EQ(m.weight_names, (std::vector<std::string>{"net.0.weight", "net.0.bias", "net.2.weight",
                                                      "net.4.weight", "net.4.bias"}));
  EXPECT_EQ(fn.LookupValue("net.2.bias"), nullptr);
  ASSERT_EQ(fn.ops().size(), 5u);  // 3 Gemm + 2 Relu, no Identity
  EXPECT_EQ(fn.ops()[2]->input(2)->name(), "net.0.bias");
}

// The GPT-2 export computes shapes at run time (Shape, Gather, Concat, Range);
// bound to 2x16, every value comes out static, and the weights keep their names.
TEST(OnnxImporterTest, DynamicGpt2IsFullyTypedWithWeightNamesKept) {
  ImportOptions o;
  o.input_shapes["input_ids"] = {2, 16};
  ASSERT_OK_AND_ASSIGN(ImportedModel m, ImportOnnxFile(SourcePath("data/onnx/gpt2-small.onnx"), o));
  const Function& fn = *m.module.entry();
  EXPECT_EQ(fn.name(), "gpt2_small");
  ASSERT_NE(fn.LookupValue("h.1.attn.c_attn.weight"), nullptr);
  EXPECT_EQ(fn.LookupValue("h.1.attn.c_attn.weight")->type().ToString(), "tensor<64x192xf32, d0>");
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) EXPECT_TRUE(r->type().HasStaticShape()) << r->Ref();
  }
  EXPECT_EQ(fn.returns()[0]->type().ToString(), "tensor<2x16x256xf32, d0>");
}

TEST(OnnxImporterTest, ParseInputBinding) {
  ASSERT_OK_AND_ASSIGN(auto b, ParseInputBinding("input_ids=2x16"));
  EXPECT_EQ(b.first, "input_ids");
  EXPECT_EQ(b.second, (std::vector<int64_t>{2, 16}));
  ASSERT_OK_AND_ASSIGN(auto c, ParseInputBinding("a=b=7"));
  EXPECT_EQ(c.first, "a=b");
  for (const char* bad : {"x", "=2", "x=", "x=2x", "x=-1", "x=2y3", "x=2xx3"}) {
    EXPECT_THAT(ParseInputBinding(bad), StatusIs(StatusCode::kInvalidArgument, "NAME=DIMxDIM"))
        << bad;
  }
}

TEST(OnnxImporterTest, SanitizeName) {
  EXPECT_EQ(SanitizeName("/h.0/attn/MatMul_output_0"), "h.0.attn.MatMul_output_0");
  EXPECT_EQ(SanitizeName("onnx::MatMul_254"), "onnx..MatMul_254");
  EXPECT_EQ(SanitizeName("a b-c"), "a_b_c");
  EXPECT_EQ(SanitizeName("//"), "v");
  EXPECT_EQ(SanitizeName("42"), "42");
}

}  // namespace
}  // namespace distir::onnx_import
