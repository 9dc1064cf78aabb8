// The text parser: valid expressions, scanTensors, binding, and every error with its column.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tessel/tessel.h"

using namespace tessel;

namespace {

std::map<std::string, TensorBase> tensors() {
  std::map<std::string, TensorBase> m;
  m["A"] = Tensor<double>("A", {3, 4});
  m["B"] = Tensor<double>("B", {3, 5});
  m["C"] = Tensor<double>("C", {5, 4});
  m["D"] = Tensor<double>("D", {3, 4});
  m["a"] = Tensor<double>("a", {3});
  m["c"] = Tensor<double>("c", {5});
  m["s"] = Tensor<double>("s", {});
  m["x_1"] = Tensor<double>("x_1", {3});
  return m;
}

std::string roundTrip(const std::string& text) { return parseAssignment(text, tensors()).str(); }

// Expects a ParseError at `column` whose message contains `part`.
void expectParseError(const std::string& text, int column, const std::string& part) {
  SCOPED_TRACE(text);
  try {
    parseAssignment(text, tensors());
    ADD_FAILURE() << "no ParseError for \"" << text << "\"";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_EQ(e.text(), text);
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message \"" << e.what() << "\" lacks \"" << part << "\"";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
  // scanTensors reports the same syntax error.
  try {
    scanTensors(text);
    ADD_FAILURE() << "scanTensors accepted \"" << text << "\"";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.column(), column);
  }
}

}  // namespace

TEST(Parser, SimpleAssignments) {
  EXPECT_EQ(roundTrip("a(i) = B(i,j) * c(j)"), "a(i) = B(i,j) * c(j)");
  EXPECT_EQ(roundTrip("A(i,j)=B(i,k)*C(k,j)"), "A(i,j) = B(i,k) * C(k,j)");
  EXPECT_EQ(roundTrip("  A ( i , j )\t+=\n B(i,k) * C(k,j)  "), "A(i,j) += B(i,k) * C(k,j)");
  EXPECT_EQ(roundTrip("s = a(i) * a(i)"), "s = a(i) * a(i)");
  EXPECT_EQ(roundTrip("s() = a(i) * a(i)"), "s = a(i) * a(i)");
  EXPECT_EQ(roundTrip("a(i) = s * a(i)"), "a(i) = s * a(i)");
  EXPECT_EQ(roundTrip("a(i) = s() * x_1(i)"), "a(i) = s * x_1(i)");
  EXPECT_EQ(roundTrip("A(i,j) = 2"), "A(i,j) = 2");
}

TEST(Parser, PrecedenceAndAssociativity) {
  EXPECT_EQ(roundTrip("A(i,j) = B(i,k) * C(k,j) + D(i,j)"), "A(i,j) = B(i,k) * C(k,j) + D(i,j)");
  EXPECT_EQ(roundTrip("A(i,j) = D(i,j) * (B(i,k) * C(k,j) + D(i,j))"),
            "A(i,j) = D(i,j) * (B(i,k) * C(k,j) + D(i,j))");
  EXPECT_EQ(roundTrip("A(i,j) = (D(i,j) + D(i,j)) * (D(i,j) - 1)"),
            "A(i,j) = (D(i,j) + D(i,j)) * (D(i,j) - 1)");
  EXPECT_EQ(roundTrip("A(i,j) = ((D(i,j)))"), "A(i,j) = D(i,j)");
  EXPECT_EQ(roundTrip("a(i) = (x_1(i) - x_1(i)) - x_1(i)"), "a(i) = x_1(i) - x_1(i) - x_1(i)");
  // Left associativity is kept: the tree of "x - (y - z)" differs from "x - y - z".
  Assignment l = parseAssignment("a(i) = x_1(i) - x_1(i) - x_1(i)", tensors());
  ASSERT_EQ(l.rhs.kind(), ExprKind::Sub);
  EXPECT_EQ(l.rhs.node().a.kind(), ExprKind::Sub);
  EXPECT_EQ(l.rhs.node().b.kind(), ExprKind::Access);
  EXPECT_EQ(roundTrip("a(i) = x_1(i) - (x_1(i) - x_1(i))"), "a(i) = x_1(i) - (x_1(i) - x_1(i))");
  EXPECT_EQ(roundTrip("a(i) = x_1(i) / (x_1(i) * x_1(i))"), "a(i) = x_1(i) / (x_1(i) * x_1(i))");
  EXPECT_EQ(roundTrip("a(i) = x_1(i) * x_1(i) / x_1(i)"), "a(i) = x_1(i) * x_1(i) / x_1(i)");
  // '*' binds tighter than '+'.
  Assignment p = parseAssignment("a(i) = x_1(i) + x_1(i) * 2", tensors());
  ASSERT_EQ(p.rhs.kind(), ExprKind::Add);
  EXPECT_EQ(p.rhs.node().b.kind(), ExprKind::Mul);
}

TEST(Parser, NegationAndLiterals) {
  EXPECT_EQ(roundTrip("a(i) = -x_1(i)"), "a(i) = -x_1(i)");
  EXPECT_EQ(roundTrip("a(i) = - - x_1(i)"), "a(i) = -(-x_1(i))");
  EXPECT_EQ(roundTrip("a(i) = x_1(i) * -2"), "a(i) = x_1(i) * -2");
  EXPECT_EQ(roundTrip("a(i) = -(x_1(i) + 1)"), "a(i) = -(x_1(i) + 1)");

  auto literal = [](const std::string& num) {
    Assignment a = parseAssignment("a(i) = " + num, tensors());
    EXPECT_EQ(a.rhs.kind(), ExprKind::Literal) << num;
    return a.rhs.node().value;
  };
  EXPECT_EQ(literal("3"), 3.0);
  EXPECT_EQ(literal("0"), 0.0);
  EXPECT_EQ(literal("2.5"), 2.5);
  EXPECT_EQ(literal("1."), 1.0);
  EXPECT_EQ(literal(".25"), 0.25);
  EXPECT_EQ(literal("1e3"), 1000.0);
  EXPECT_EQ(literal("1.5E-2"), 0.015);
  EXPECT_EQ(literal("2e+2"), 200.0);
  EXPECT_EQ(literal("0.1"), 0.1);
  EXPECT_EQ(literal("007"), 7.0);
  // A negative number is a negated literal.
  Assignment n = parseAssignment("a(i) = -4", tensors());
  ASSERT_EQ(n.rhs.kind(), ExprKind::Neg);
  EXPECT_EQ(n.rhs.node().a.node().value, 4.0);
}

TEST(Parser, BindsTensorsAndVariables) {
  auto ts = tensors();
  Assignment a = parseAssignment("A(i,j) = B(i,k) * C(k,j) + D(i,j)", ts);
  EXPECT_FALSE(a.accumulate);
  const ExprNode& lhs = a.lhsNode();
  EXPECT_EQ(lhs.tensor, ts["A"].tensorVar());
  EXPECT_EQ(lhs.binding, ts["A"].impl());
  ASSERT_EQ(lhs.vars.size(), 2u);
  EXPECT_EQ(lhs.vars[0].name(), "i");
  EXPECT_EQ(lhs.vars[1].name(), "j");
  auto acc = rhsAccesses(a);
  ASSERT_EQ(acc.size(), 3u);
  EXPECT_EQ(acc[0]->tensor, ts["B"].tensorVar());
  EXPECT_EQ(acc[0]->binding, ts["B"].impl());
  EXPECT_EQ(acc[1]->tensor, ts["C"].tensorVar());
  EXPECT_EQ(acc[1]->binding, ts["C"].impl());
  EXPECT_EQ(acc[2]->tensor, ts["D"].tensorVar());
  EXPECT_EQ(acc[2]->binding, ts["D"].impl());
  // Same name, same variable.
  EXPECT_EQ(acc[0]->vars[0], lhs.vars[0]);
  EXPECT_EQ(acc[1]->vars[1], lhs.vars[1]);
  EXPECT_EQ(acc[0]->vars[1], acc[1]->vars[0]);
  EXPECT_EQ(acc[2]->vars, lhs.vars);
  EXPECT_EQ(freeVars(a).size(), 2u);
  ASSERT_EQ(reductionVars(a).size(), 1u);
  EXPECT_EQ(reductionVars(a)[0].name(), "k");
  EXPECT_NO_THROW(checkAssignment(a));

  // Two parses give distinct variables.
  Assignment b = parseAssignment("A(i,j) = D(i,j)", ts);
  EXPECT_NE(b.lhsNode().vars[0], lhs.vars[0]);
  EXPECT_TRUE(parseAssignment("A(i,j) += D(i,j)", ts).accumulate);
}

TEST(Parser, BindingErrors) {
  auto ts = tensors();
  try {
    parseAssignment("a(i) = Q(i,j) * c(j)", ts);
    FAIL() << "unknown tensor accepted";
  } catch (const NotationError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown tensor Q"), std::string::npos) << e.what();
  }
  try {
    parseAssignment("Z(i) = a(i)", ts);
    FAIL() << "unknown output accepted";
  } catch (const NotationError& e) {
    EXPECT_NE(std::string(e.what()).find("Z"), std::string::npos) << e.what();
  }
  try {
    parseAssignment("a(i) = B(i,j,k)", ts);
    FAIL() << "wrong arity accepted";
  } catch (const NotationError& e) {
    EXPECT_NE(std::string(e.what()).find("B has order 2 but is accessed with 3 index variables"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parseAssignment("a = B(i,j)", ts), NotationError);
  EXPECT_THROW(parseAssignment("a(i) = s(i)", ts), NotationError);
}

TEST(ScanTensors, OutputFirstThenInputsInOrder) {
  auto u = scanTensors("A(i,j) = C(k,j) * B(i,k) + C(k,j) * s + x(i) + A2()");
  ASSERT_EQ(u.size(), 6u);
  EXPECT_EQ(u[0].name, "A");
  EXPECT_EQ(u[0].order, 2);
  EXPECT_TRUE(u[0].isOutput);
  EXPECT_EQ(u[1].name, "C");
  EXPECT_EQ(u[1].order, 2);
  EXPECT_FALSE(u[1].isOutput);
  EXPECT_EQ(u[2].name, "B");
  EXPECT_EQ(u[3].name, "s");
  EXPECT_EQ(u[3].order, 0);
  EXPECT_EQ(u[4].name, "x");
  EXPECT_EQ(u[4].order, 1);
  EXPECT_EQ(u[5].name, "A2");
  EXPECT_EQ(u[5].order, 0);
  for (size_t k = 1; k < u.size(); k++) EXPECT_FALSE(u[k].isOutput);
  auto v = scanTensors("y = A2() * b");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "y");
  EXPECT_EQ(v[0].order, 0);
  EXPECT_EQ(v[1].name, "A2");
  EXPECT_EQ(v[1].order, 0);
  EXPECT_EQ(v[2].name, "b");
  // The output on the right is not listed twice (checkAssignment rejects it later).
  auto w = scanTensors("a(i) += a(i) * b(i)");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(w[0].isOutput);
  EXPECT_EQ(w[1].name, "b");
  // Index names never become tensors.
  auto z = scanTensors("a(B) = B(B,j) * c(j)");
  ASSERT_EQ(z.size(), 3u);
  EXPECT_EQ(z[1].name, "B");
}

TEST(ScanTensors, InconsistentOrders) {
  try {
    scanTensors("a(i) = B(i,j) * B(j)");
    FAIL() << "accepted";
  } catch (const NotationError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("B"), std::string::npos) << m;
    EXPECT_NE(m.find("2"), std::string::npos) << m;
    EXPECT_NE(m.find("1"), std::string::npos) << m;
  }
  EXPECT_THROW(scanTensors("a(i) = a(i,j)"), NotationError);
  EXPECT_THROW(scanTensors("a(i) = b(i) + b"), NotationError);
}

TEST(ParseErrors, ColumnsAndMessages) {
  // Empty input / missing pieces.
  expectParseError("", 1, "empty expression");
  expectParseError("   ", 4, "empty expression");
  expectParseError("a(i) =", 7, "empty expression");
  expectParseError("a(i) =   ", 10, "empty expression");
  expectParseError("a(i) += ", 9, "empty expression");
  // Missing '='.
  expectParseError("a(i)", 5, "expected '=' or '+='");
  expectParseError("a(i) B(i,j)", 6, "expected '=' or '+='");
  expectParseError("a(i) + b(i) = c(i)", 6, "expected '=' or '+='");
  expectParseError("a(i) * = c(i)", 6, "expected '=' or '+='");
  // Unexpected characters.
  expectParseError("a(i) = b(i) $ c(i)", 13, "unexpected character '$'");
  expectParseError("a(i) = b(i) ^ 2", 13, "unexpected character '^'");
  expectParseError("a[i] = b(i)", 2, "unexpected character '['");
  expectParseError("a(i) = b(i) % 2", 13, "unexpected character '%'");
  expectParseError("a(i) = b(i.) ", 11, "unexpected character '.'");
  // Parentheses.
  expectParseError("a(i) = (b(i) + c(i)", 20, "missing ')'");
  expectParseError("a(i) = (b(i) + c(i) d(i)", 21, "missing ')'");
  expectParseError("a(i) = b(i", 11, "missing ')'");
  expectParseError("a(i = b(i)", 5, "expected ',' or ')'");
  expectParseError("a(i) = b(i) + c(i))", 19, "unmatched ')'");
  expectParseError("a(i) = ()", 9, "empty parentheses");
  // Index lists.
  expectParseError("A(i,) = B(i,j)", 5, "expected an index variable name");
  expectParseError("A(,i) = B(i,j)", 3, "expected an index variable name");
  expectParseError("a(i) = B(i,1)", 12, "expected an index variable name");
  expectParseError("a(i) = B(i j)", 12, "expected ',' or ')'");
  // Operands.
  expectParseError("a(i) = b(i) +", 14, "expected an operand");
  expectParseError("a(i) = b(i) * * c(i)", 15, "expected an operand but found '*'");
  expectParseError("a(i) = * c(i)", 8, "expected an operand but found '*'");
  expectParseError("a(i) = + c(i)", 8, "expected an operand but found '+'");
  expectParseError("a(i) = b(i) + = c(i)", 15, "expected an operand but found '='");
  expectParseError("a(i) = b(i) += c(i)", 13, "unexpected '+='");
  // Trailing garbage.
  expectParseError("a(i) = b(i) c(i)", 13, "unexpected 'c'");
  expectParseError("a(i) = 2 3", 10, "unexpected '3'");
  expectParseError("a(i) = b(i) = c(i)", 13, "unexpected '='");
  expectParseError("a(i) = 2i", 9, "unexpected 'i'");
  // The lhs must be an access.
  expectParseError("2 = b(i)", 1, "left-hand side must be a tensor access, not a number");
  expectParseError("  3.5 += b(i)", 3, "not a number");
  expectParseError("-a(i) = b(i)", 1, "expected a tensor access on the left-hand side");
  expectParseError("(a(i)) = b(i)", 1, "expected a tensor access on the left-hand side");
  expectParseError("= b(i)", 1, "expected a tensor access on the left-hand side");
  // Numbers.
  expectParseError("a(i) = 2e", 9, "malformed exponent");
  expectParseError("a(i) = 1.5e+ * b(i)", 11, "malformed exponent");
  expectParseError("a(i) = 1e999", 8, "out of range");
}

TEST(ParseErrors, MessageFormat) {
  try {
    parseAssignment("a(i) = b(i) $ c(i)", tensors());
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unexpected character '$' at column 13\n"
              "  a(i) = b(i) $ c(i)\n"
              "              ^");
    EXPECT_EQ(e.column(), 13);
  }
  try {
    parseAssignment("a(i) =", tensors());
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()),
              "empty expression after '=' at column 7\n"
              "  a(i) =\n"
              "        ^");
  }
  // ParseError is a UserError.
  EXPECT_THROW(parseAssignment("a(i) = )", tensors()), UserError);
  // Built directly.
  ParseError direct("bad", "xyz", 2);
  EXPECT_EQ(std::string(direct.what()), "bad at column 2\n  xyz\n   ^");
  ParseError tab("bad", "\tx$", 3);
  EXPECT_EQ(std::string(tab.what()), "bad at column 3\n  \tx$\n  \t ^");
}

TEST(Parser, RoundTripsItsOwnOutput) {
  auto ts = tensors();
  const char* texts[] = {
      "A(i,j) = B(i,k) * C(k,j) + D(i,j)",
      "A(i,j) = D(i,j) * (D(i,j) + D(i,j)) / (2 - D(i,j))",
      "a(i) = -(x_1(i) - a(i) * -0.5) - -x_1(i)",
      "A(i,j) += 1e-300 * D(i,j) - 12345.678 / s",
      "s = B(i,k) * c(k) * a(i)",
  };
  for (const char* t : texts) {
    std::string once = parseAssignment(t, ts).str();
    EXPECT_EQ(parseAssignment(once, ts).str(), once) << t;
  }
}
