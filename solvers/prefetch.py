"""Software prefetch for kernels that visit rows in random order.

Coordinate descent in a random permutation reads one sample's row and scalars per visit,
from addresses no hardware prefetcher can guess; with the data out of L2 each visit then
waits on several memory round trips (the sample's scalars, its row pointers, its row).
Asking a few visits ahead for the scalars and row pointers overlaps those round trips with
the current work. (Prefetching the rows themselves as well was measured slower on every
benchmark set: it needs the row pointers first, and the extra loads cost more than the
misses they hide.)

:func:`prefetch` is the LLVM ``llvm.prefetch`` intrinsic (a hint: no fault, no effect on
results, whatever the address); :func:`prefetch_ptr` asks for a CSR row's ``indptr``
entry (a no-op for dense matrices).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["prefetch", "prefetch_ptr"]


@intrinsic
def prefetch(typingctx, arr, i):
    """Hint that ``arr.flat[i]`` (C-order offset ``i``) will be read soon."""
    if not isinstance(arr, types.Array) or not isinstance(i, types.Integer):
        return None
    sig = types.void(arr, i)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = context.cast(builder, args[1], idxty, types.intp)
        base = builder.bitcast(ary.data, ir.IntType(8).as_pointer())
        itemsize = context.get_constant(
            types.intp, context.get_abi_sizeof(context.get_data_type(aryty.dtype))
        )
        ptr = builder.gep(base, [builder.mul(idx, itemsize)])
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # read, high temporal locality, data cache
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


def prefetch_ptr(M, i):  # pragma: no cover
    """Hint that row ``i``'s ``indptr`` entry is needed soon (no-op for dense ``M``)."""


@overload(prefetch_ptr, inline="always")
def _prefetch_ptr(M, i):
    if isinstance(M, types.BaseTuple):

        def impl(M, i):
            prefetch(M[2], np.uint64(i))

        return impl

    return lambda M, i: None
