#!/usr/bin/env python3
"""Conformance cases for nn.Module: print(model), traversal, state dicts, modes, conversions, devices.

    /tmp/torchenv/bin/python tests/facade/spec/gen_modules.py torch > tests/facade/spec/modules.expected.txt
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_runner import main, registry  # noqa: E402

CASES, case = registry()


def r4(values):
    return [round(v, 4) + 0.0 for v in values]


def models(T):
    nn = T.nn

    class Scaler(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.n = n
            self.scale = nn.Parameter(T.ones(n))
            self.register_buffer("running", T.zeros(n))
            self.register_buffer("scratch", T.zeros(1), persistent=False)

        def forward(self, x):
            return x * self.scale + self.running

        def extra_repr(self):
            return f"n={self.n}"

    class TwoLine(nn.Module):
        def extra_repr(self):
            return "first line\nsecond line"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8, bias=False), nn.Tanh())
            self.scaler = Scaler(8)
            self.head = nn.Linear(8, 3)
            self.act = nn.Sigmoid()

        def forward(self, x):
            return self.act(self.head(self.scaler(self.body(x))))

    class Empty(nn.Module):
        pass

    class WithTwoLine(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = TwoLine()
            self.relu = nn.ReLU(inplace=True)

        def extra_repr(self):
            return "outer=1"

    return Net, Scaler, TwoLine, Empty, WithTwoLine


@case
def print_models(T):
    T.manual_seed(0)
    Net, Scaler, TwoLine, Empty, WithTwoLine = models(T)
    nn = T.nn
    deep = nn.Sequential(nn.Sequential(nn.Linear(784, 512), nn.ReLU()), nn.Sequential(nn.Linear(512, 10)))
    return [str(Net()), repr(Scaler(3)), repr(TwoLine()), repr(Empty()), repr(WithTwoLine()), repr(deep),
            repr(nn.Sequential()), repr(nn.Linear(2, 1, bias=False)), repr(nn.ReLU(inplace=True))]


@case
def traversal(T):
    T.manual_seed(0)
    Net = models(T)[0]
    net = Net()
    shared = T.nn.Linear(2, 2)
    tied = T.nn.Sequential(shared, T.nn.ReLU(), shared)
    return [[n for n, _ in net.named_modules()], [type(m).__name__ for m in net.modules()],
            [type(c).__name__ for c in net.children()], [n for n, _ in net.named_children()],
            [[n, list(p.shape)] for n, p in net.named_parameters()], [n for n, _ in net.named_buffers()],
            len(list(net.parameters())), [n for n, _ in tied.named_modules()], [n for n, _ in tied.named_parameters()],
            len(list(tied.parameters())), [n for n, _ in net.body.named_parameters(prefix="body")],
            [n for n, _ in net.named_parameters(recurse=False)], [n for n, _ in net.scaler.named_parameters()]]


@case
def state_dict_keys_and_values(T):
    T.manual_seed(0)
    Net = models(T)[0]
    net = Net()
    sd = net.state_dict()
    return [list(sd.keys()), [list(v.shape) for v in sd.values()], [v.requires_grad for v in sd.values()],
            type(sd).__name__, r4(sd["head.bias"].tolist()), r4(sd["body.0.weight"][0].tolist()),
            [type(v).__name__ for v in net.state_dict(keep_vars=True).values()][:2]]


@case
def state_dict_round_trip(T):
    T.manual_seed(0)
    Net = models(T)[0]
    a, b = Net(), Net()
    x = T.linspace(-1, 1, 8).reshape(2, 4)
    before = a(x).tolist() != b(x).tolist()
    result = b.load_state_dict(a.state_dict())
    return [before, repr(result), a(x).tolist() == b(x).tolist(), list(result.missing_keys), r4(b(x)[0].tolist())]


@case
def load_state_dict_errors(T):
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    sd = model.state_dict()
    out = []
    missing = {k: v for k, v in sd.items() if k != "2.bias"}
    extra = dict(sd, **{"2.extra": T.zeros(1), "3.weight": T.zeros(1)})
    wrong = dict(sd, **{"0.weight": T.zeros(3, 3)})
    for bad in (missing, extra, wrong, dict(missing, **{"junk": T.ones(1)})):
        try:
            model.load_state_dict(bad)
            out.append("NO ERROR")
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    loose = model.load_state_dict(dict(missing, junk=T.ones(1)), strict=False)
    out.append([repr(loose), loose.missing_keys, loose.unexpected_keys])
    return out


@case
def modes_and_grad_flags(T):
    T.manual_seed(0)
    Net = models(T)[0]
    net = Net()
    first = [m.training for m in net.modules()]
    net.eval()
    evaluated = [m.training for m in net.modules()]
    net.body.train()
    mixed = [m.training for m in net.modules()]
    back = net.train(False) is net
    net.requires_grad_(False)
    flags = [p.requires_grad for p in net.parameters()]
    net.head.requires_grad_()
    flags2 = [p.requires_grad for p in net.parameters()]
    return [first, evaluated, mixed, back, flags, flags2]


@case
def apply_and_init(T):
    T.manual_seed(0)
    nn = T.nn
    seen = []

    def init(m):
        seen.append(type(m).__name__)
        if isinstance(m, nn.Linear):
            with T.no_grad():
                m.weight.fill_(0.5)
                if m.bias is not None:
                    m.bias.zero_()

    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1)))
    returned = model.apply(init) is model
    return [seen, returned, model(T.ones(1, 2)).tolist(), [p.requires_grad for p in model.parameters()]]


@case
def conversions_and_devices(T):
    T.manual_seed(0)
    nn = T.nn
    device = "cuda" if T.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    same = model.to(device) is model
    w = model[0].weight
    model.double()
    dtypes = [str(p.dtype) for p in model.parameters()]
    identity = model[0].weight is w
    model.to(T.float32)
    back = [str(p.dtype) for p in model.parameters()]
    model.to(T.device("cpu"), T.float64)
    both = [str(p.dtype) for p in model.parameters()]
    x = T.ones(2, dtype=T.float64)
    return [device, same, dtypes, identity, back, both, str(model[0].weight.device), str(x.to(device).device),
            x.to("cpu") is x, str(x.to(T.float32).dtype), str(x.to("cpu", T.int64).dtype),
            str(x.to(T.ones(1, dtype=T.int32)).dtype), model.float().cpu() is model]


@case
def device_objects(T):
    d0, d1, d2 = T.device("cpu"), T.device("cuda"), T.device("cuda:1")
    return [repr(d0), repr(d1), repr(d2), str(d0), str(d1), str(d2), d0.type, d0.index, d1.type, d1.index,
            d2.index, d0 == T.device("cpu"), d1 == d2, repr(T.device("cuda", 0)), str(T.ones(1).device),
            T.ones(1).device == d0, T.cuda.is_available(), T.cuda.device_count(), T.accelerator.is_available(),
            T.backends.mps.is_available(), repr(T.get_default_device()), T.ones(1).is_cuda]


@case
def device_errors(T):
    out = []
    for make in (lambda: T.device("gpu"), lambda: T.device("cuda:x"), lambda: T.device("cpu:-1")):
        try:
            make()
            out.append("NO ERROR")
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    return out


@case
def module_attribute_errors(T):
    nn = T.nn
    model = nn.Linear(2, 2)
    out = []
    for bad in (lambda: model.missing, lambda: setattr(model, "weight", T.ones(2, 2)),
                lambda: model.register_buffer("weight", T.ones(1)), lambda: model.register_buffer("a.b", T.ones(1)),
                lambda: model.add_module("x", 3)):
        try:
            bad()
            out.append("NO ERROR")
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    return out


@case
def module_setattr_rules(T):
    nn = T.nn
    model = nn.Linear(2, 2)
    model.weight = nn.Parameter(T.zeros(2, 2))
    model.bias = None
    model.extra = nn.ReLU()
    model.extra = None
    model.register_buffer("stat", T.ones(2))
    model.stat = T.zeros(2)
    del model.stat
    return [[n for n, _ in model.named_parameters()], list(model.state_dict()), repr(model),
            [n for n, _ in model.named_modules()], hasattr(model, "stat")]


@case
def clip_gradients(T):
    T.manual_seed(0)
    model = T.nn.Linear(5, 3)
    out = []
    for norm_type in (2.0, "inf", 1.0):
        model.zero_grad()
        model(T.randn(4, 5)).pow(2).sum().backward()
        total = T.nn.utils.clip_grad_norm_(model.parameters(), 0.5, norm_type=norm_type)
        out.append([total.item(), model.weight.grad[0].tolist(), model.bias.grad.tolist()])
    T.nn.utils.clip_grad_value_(model.parameters(), 0.01)
    vec = T.nn.utils.parameters_to_vector(model.parameters())
    T.nn.utils.vector_to_parameters(vec * 2, model.parameters())
    out.append([model.bias.grad.tolist(), list(vec.shape), (model.bias / vec[-3:]).tolist()])
    return out


if __name__ == "__main__":
    sys.exit(main(CASES, sys.argv))
