// Formats: construction, validation, parsing, printing, named formats, datatypes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessel/tensor.h"

using namespace tessel;
using LK = LevelKind;

namespace {

template <typename F>
std::string formatErrorText(F f) {
  try {
    f();
  } catch (const FormatError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected FormatError";
  return "";
}

}  // namespace

TEST(Datatype, NamesAndSizes) {
  EXPECT_STREQ(cTypeName(Datatype::Float64), "double");
  EXPECT_STREQ(cTypeName(Datatype::Float32), "float");
  EXPECT_STREQ(cTypeName(Datatype::Int32), "int32_t");
  EXPECT_STREQ(cTypeName(Datatype::Int64), "int64_t");
  EXPECT_STREQ(cTypeName(Datatype::Bool), "bool");
  EXPECT_STREQ(datatypeName(Datatype::Float64), "float64");
  EXPECT_STREQ(datatypeName(Datatype::Float32), "float32");
  EXPECT_STREQ(datatypeName(Datatype::Int32), "int32");
  EXPECT_STREQ(datatypeName(Datatype::Int64), "int64");
  EXPECT_STREQ(datatypeName(Datatype::Bool), "bool");
  EXPECT_EQ(datatypeSize(Datatype::Float64), 8);
  EXPECT_EQ(datatypeSize(Datatype::Float32), 4);
  EXPECT_EQ(datatypeSize(Datatype::Int32), 4);
  EXPECT_EQ(datatypeSize(Datatype::Int64), 8);
  EXPECT_EQ(datatypeSize(Datatype::Bool), static_cast<int>(sizeof(bool)));
  EXPECT_EQ(datatypeOf<double>(), Datatype::Float64);
  EXPECT_EQ(datatypeOf<bool>(), Datatype::Bool);
}

TEST(Format, LevelLetters) {
  EXPECT_EQ(levelLetter(LK::Dense), 'd');
  EXPECT_EQ(levelLetter(LK::Compressed), 's');
  EXPECT_EQ(levelLetter(LK::CompressedNU), 'u');
  EXPECT_EQ(levelLetter(LK::Singleton), 'q');
}

TEST(Format, NamedFormats) {
  EXPECT_EQ(CSR().levels(), (std::vector<LK>{LK::Dense, LK::Compressed}));
  EXPECT_EQ(CSR().modeOrder(), (std::vector<int>{0, 1}));
  EXPECT_EQ(CSC().levels(), (std::vector<LK>{LK::Dense, LK::Compressed}));
  EXPECT_EQ(CSC().modeOrder(), (std::vector<int>{1, 0}));
  EXPECT_EQ(DCSR().levels(), (std::vector<LK>{LK::Compressed, LK::Compressed}));
  EXPECT_EQ(DCSR().modeOrder(), (std::vector<int>{0, 1}));
  EXPECT_EQ(DCSC().modeOrder(), (std::vector<int>{1, 0}));
  EXPECT_EQ(COO().levels(), (std::vector<LK>{LK::CompressedNU, LK::Singleton}));
  EXPECT_EQ(COO(2), COO());
  EXPECT_EQ(COO(3).levels(), (std::vector<LK>{LK::CompressedNU, LK::Singleton, LK::Singleton}));
  EXPECT_EQ(COO(5).str(), "uqqqq");
  EXPECT_EQ(COO(1).str(), "s");  // a 1-D coordinate list is sorted and unique
  EXPECT_EQ(COO(0).order(), 0);
  EXPECT_EQ(CSF(3).levels(), (std::vector<LK>(3, LK::Compressed)));
  EXPECT_EQ(CSF(4).str(), "ssss");
  EXPECT_EQ(DenseFormat(3).str(), "ddd");
  EXPECT_EQ(DenseFormat(0).order(), 0);
  EXPECT_EQ(CSR().str(), "ds");
  EXPECT_EQ(CSC().str(), "ds:1,0");
  EXPECT_EQ(DCSC().str(), "ss:1,0");
  EXPECT_EQ(CSR().posWidth(), IndexWidth::W32);
  EXPECT_EQ(CSR().crdWidth(), IndexWidth::W32);
  EXPECT_THROW(COO(-1), FormatError);
  EXPECT_THROW(CSF(17), FormatError);
  EXPECT_THROW(DenseFormat(17), FormatError);
  EXPECT_NO_THROW(DenseFormat(16));
}

TEST(Format, Queries) {
  Format f({LK::Compressed, LK::Dense, LK::Compressed}, {2, 0, 1});
  EXPECT_EQ(f.order(), 3);
  EXPECT_EQ(f.modeOfLevel(0), 2);
  EXPECT_EQ(f.modeOfLevel(2), 1);
  EXPECT_EQ(f.levelOfMode(2), 0);
  EXPECT_EQ(f.levelOfMode(0), 1);
  EXPECT_EQ(f.levelOfMode(1), 2);
  EXPECT_THROW(f.levelOfMode(3), FormatError);
  EXPECT_FALSE(f.isAllDense());
  EXPECT_TRUE(DenseFormat(3).isAllDense());
  EXPECT_TRUE(Format().isAllDense());
  EXPECT_EQ(f.str(), "sds:2,0,1");

  Format w = f.withWidths(IndexWidth::W64, IndexWidth::W32);
  EXPECT_EQ(w.posWidth(), IndexWidth::W64);
  EXPECT_EQ(w.crdWidth(), IndexWidth::W32);
  EXPECT_EQ(w.levels(), f.levels());
  EXPECT_EQ(w.modeOrder(), f.modeOrder());
  EXPECT_FALSE(w == f);
  EXPECT_TRUE(w.withWidths(IndexWidth::W32, IndexWidth::W32) == f);
}

TEST(Format, LevelIsUnique) {
  Format coo3 = COO(3);
  EXPECT_FALSE(coo3.levelIsUnique(0));
  EXPECT_FALSE(coo3.levelIsUnique(1));  // middle singleton
  EXPECT_TRUE(coo3.levelIsUnique(2));   // last singleton
  EXPECT_TRUE(CSR().levelIsUnique(0));
  EXPECT_TRUE(CSR().levelIsUnique(1));
  EXPECT_TRUE(DCSR().levelIsUnique(0));
  Format duq = Format::parse("duq");
  EXPECT_TRUE(duq.levelIsUnique(0));
  EXPECT_FALSE(duq.levelIsUnique(1));
  EXPECT_TRUE(duq.levelIsUnique(2));
}

TEST(Format, ParseAndPrint) {
  EXPECT_EQ(Format::parse("ds"), CSR());
  EXPECT_EQ(Format::parse("ds:1,0"), CSC());
  EXPECT_EQ(Format::parse("ss"), DCSR());
  EXPECT_EQ(Format::parse("ss:1,0"), DCSC());
  EXPECT_EQ(Format::parse("uq"), COO(2));
  EXPECT_EQ(Format::parse("uqq"), COO(3));
  EXPECT_EQ(Format::parse("sss"), CSF(3));
  EXPECT_EQ(Format::parse("dd"), DenseFormat(2));
  EXPECT_EQ(Format::parse("dss").levels(),
            (std::vector<LK>{LK::Dense, LK::Compressed, LK::Compressed}));
  EXPECT_EQ(Format::parse("").order(), 0);
  EXPECT_EQ(Format::parse(""), Format());
  EXPECT_EQ(Format::parse("  ds  "), CSR());
  // Identity mode order written out is accepted and printed without it.
  EXPECT_EQ(Format::parse("ds:0,1"), CSR());
  EXPECT_EQ(Format::parse("ds:0,1").str(), "ds");
  for (const char* s : {"", "d", "s", "ds", "ds:1,0", "uq", "uq:1,0", "uqq:2,0,1", "dss",
                        "sds:2,0,1", "duq", "suqq:3,2,1,0", "ddddd", "ssss:1,0,3,2",
                        "dddddddddddddddd", "b", "db", "bs:1,0", "dbs"}) {
    EXPECT_EQ(Format::parse(s).str(), s);
  }
}

TEST(Format, ParseErrorsNameTheText) {
  auto err = [](const std::string& s) { return formatErrorText([&] { Format::parse(s); }); };
  EXPECT_NE(err("dx").find("'x'"), std::string::npos);
  EXPECT_NE(err("dx").find("dx"), std::string::npos);
  EXPECT_NE(err("D").find("'D'"), std::string::npos);
  EXPECT_NE(err("csr").find("'c'"), std::string::npos);
  EXPECT_NE(err("ds:0").find("ds:0"), std::string::npos);     // wrong count
  EXPECT_NE(err("ds:0,1,2").find("entries"), std::string::npos);
  EXPECT_NE(err("ds:0,0").find("permutation"), std::string::npos);
  EXPECT_NE(err("ds:1,2").find("permutation"), std::string::npos);
  EXPECT_NE(err("ds:a,b").find("'a'"), std::string::npos);
  EXPECT_NE(err("ds:-1,0").find("'-1'"), std::string::npos);
  EXPECT_NE(err("ds:").find("empty"), std::string::npos);
  EXPECT_NE(err("ds:0,,1").find("empty"), std::string::npos);
  EXPECT_NE(err("ds:99999999999,0").find("99999999999"), std::string::npos);
  EXPECT_FALSE(err("dddddddddddddddddd").empty());  // 18 levels > TESSEL_MAX_ORDER
}

TEST(Format, LevelRulesNameTheLevel) {
  auto err = [](const std::string& s) { return formatErrorText([&] { Format::parse(s); }); };
  // 'u' must not be last.
  EXPECT_NE(err("u").find("level 0"), std::string::npos);
  EXPECT_NE(err("du").find("level 1"), std::string::npos);
  // 'u' must be followed by 'q' only.
  EXPECT_NE(err("us").find("level 1"), std::string::npos);
  EXPECT_NE(err("ud").find("level 1"), std::string::npos);
  EXPECT_NE(err("uqs").find("level 2"), std::string::npos);
  EXPECT_NE(err("uu").find("level 1"), std::string::npos);
  // 'q' must follow 'u' or 'q'.
  EXPECT_NE(err("q").find("level 0"), std::string::npos);
  EXPECT_NE(err("qq").find("level 0"), std::string::npos);
  EXPECT_NE(err("dq").find("level 1"), std::string::npos);
  EXPECT_NE(err("sq").find("level 1"), std::string::npos);
  EXPECT_NE(err("uqdq").find("level 2"), std::string::npos);
  // Valid ones.
  EXPECT_NO_THROW(Format::parse("uq"));
  EXPECT_NO_THROW(Format::parse("duq"));
  EXPECT_NO_THROW(Format::parse("ssuqq"));
  EXPECT_NO_THROW(Format::parse("sd"));
}

TEST(Format, ConstructorValidation) {
  EXPECT_THROW(Format({LK::Dense, LK::Compressed}, {0}), FormatError);
  EXPECT_THROW(Format({LK::Dense, LK::Compressed}, {0, 0}), FormatError);
  EXPECT_THROW(Format({LK::Dense, LK::Compressed}, {-1, 0}), FormatError);
  EXPECT_THROW(Format({LK::Dense, LK::Compressed}, {0, 2}), FormatError);
  EXPECT_THROW(Format({LK::Singleton}), FormatError);
  EXPECT_THROW(Format({LK::CompressedNU}), FormatError);
  EXPECT_THROW(Format({LK::CompressedNU, LK::Dense}), FormatError);
  EXPECT_THROW(Format(std::vector<LK>(17, LK::Dense)), FormatError);
  EXPECT_NO_THROW(Format(std::vector<LK>{}));
  EXPECT_NO_THROW(Format({LK::CompressedNU, LK::Singleton}, {1, 0}, IndexWidth::W64,
                         IndexWidth::W64));
  std::string msg = formatErrorText([] { Format({LK::Dense, LK::Compressed}, {1, 1}); });
  EXPECT_NE(msg.find("1,1"), std::string::npos) << msg;
}
