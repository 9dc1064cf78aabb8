// Choosing the form of a masked reduction (OutputMask::form) from the data.
#pragma once

#include "tessel/notation.h"

namespace tessel::driver {

/// The form a masked assignment runs in: the user's, if not Auto; for Auto with a
/// reduction, a non-complemented mask and every access bound to storage, Pull when
/// nnz(M) * (1 + sum over sparse operands f of nnz(f) / (f's extent over the output's
/// variables)) is below flops + (flops / fiber) * (nnz(M) / rows), where flops is the
/// product of the operands' densities and every variable's extent, fiber the average
/// length of the last operand's fibers along the output's last variable and rows the
/// extent of the output's other variables (for C<M> = A*B: nnz(M) * (nnz(A)/m +
/// nnz(B)/n) against flops + nnz(A) * nnz(M)/m); else Push. Auto otherwise.
MaskForm chooseMaskForm(const Assignment& a);

/// a with its mask's form chosen (unchanged without a mask).
Assignment withMaskForm(const Assignment& a);

}  // namespace tessel::driver
