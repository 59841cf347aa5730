"""Expert-parallel all-to-all with autograd, issued asynchronously and waited for where the schedule says.

    x -> wait_for_gradient -> AllToAll (launch) ... other work ... -> wait_for_output -> y

Forward: AllToAll launches all_to_all_single(async_op=True) and returns at once; wait_for_output makes the
current stream wait for it. Backward runs the mirror image: AllToAll's backward launches the reverse
all-to-all of the gradient asynchronously, and wait_for_gradient, whose node autograd runs later, waits for
it. Autograd runs the ready node of highest sequence number first, so gradients of work created after the
all-to-all in forward (FarSkip's core attention and shared experts) run between launch and wait: the
paper's backward overlap (§4.1) without reordering sequence numbers by hand. A regular schedule waits right
after each launch.
"""
import torch
import torch.distributed as dist

from .marks import mark


class Pending:
    """Work handles of one all-to-all: the forward launch and, once backward reaches it, the gradient's."""

    __slots__ = ("forward", "backward")

    def __init__(self):
        self.forward = None
        self.backward = None


class _AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, out_splits, in_splits, group, pending):
        ctx.splits, ctx.group, ctx.pending = (out_splits, in_splits), group, pending
        y = x.new_empty(sum(out_splits), *x.shape[1:])
        mark("a2a_call")
        pending.forward = dist.all_to_all_single(y, x.contiguous(), out_splits, in_splits, group=group,
                                                 async_op=True)
        mark("a2a_returned")
        return y

    @staticmethod
    def backward(ctx, grad):
        out_splits, in_splits = ctx.splits
        dx = grad.new_empty(sum(in_splits), *grad.shape[1:])
        ctx.pending.backward = dist.all_to_all_single(dx, grad.contiguous(), in_splits, out_splits,
                                                      group=ctx.group, async_op=True)
        return dx, None, None, None, None


class _WaitForOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y, pending):
        mark("a2a_wait")
        pending.forward.wait()
        mark("a2a_waited")
        pending.forward = None  # a kept Work holds y, whose graph holds pending: a cycle gc cannot see
        return y.view_as(y)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class _WaitForGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, pending):
        ctx.pending = pending
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        ctx.pending.backward.wait()
        ctx.pending.backward = None
        return grad, None


def launch(x, out_splits, in_splits, group, pending):
    """Starts the all-to-all of x's rows (in_splits[r] rows to rank r, out_splits[r] from it); returns the
    receive buffer, valid only after wait(..)."""
    return _AllToAll.apply(_WaitForGradient.apply(x, pending), out_splits, in_splits, group, pending)


def wait(y, pending):
    """y, once the all-to-all that fills it has finished (a stream wait, no host block with NCCL)."""
    return _WaitForOutput.apply(y, pending)


def exchange_counts(counts, ep, group):
    """Megatron's split-size exchange. counts: this rank's rows per global expert [experts], on the device.

    Returns, on the host (one device-to-host copy, which waits for the router): the rows this rank sends to
    each rank [ep] and the rows it receives from each source for each of its experts [ep, experts / ep].
    """
    mark("counts_exchange")
    received = torch.empty_like(counts)
    dist.all_to_all_single(received, counts, group=group)
    mark("counts_stack")
    both = torch.stack((counts, received)).view(2, ep, -1)
    mark("counts_to_host")
    both = both.cpu()
    mark("counts_on_host")
    return both[0].sum(1), both[1]
