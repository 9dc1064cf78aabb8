// C spellings of IR types.
#include "codegen/c_type.h"

namespace tessel::codegen {

std::string cType(const ir::Type& t) {
  using ir::TypeKind;
  std::string base;
  switch (t.kind) {
    case TypeKind::Data: base = cTypeName(t.elem); break;
    case TypeKind::Tensor: base = "tessel_tensor_t"; break;
    case TypeKind::Void: base = "void"; break;
    case TypeKind::Byte: base = "char"; break;
    case TypeKind::IntPtr: base = "intptr_t"; break;
    case TypeKind::Size: base = "size_t"; break;
  }
  if (!t.pointer) return base;
  if (t.kind != TypeKind::Data || t.pointerToPointer) return base + (t.pointerToPointer ? "**" : "*");
  return (t.constData ? "const " : "") + base + "* restrict";
}

}  // namespace tessel::codegen
