"""The PyTorch autograd tutorial, unchanged but for its import: `import gradc.torch as torch`.

Then the same loss compiled by gradc's compiler (`gradc.grad`) from the torch-style code, to
show that the eager facade and the emitted NumPy gradient agree.
"""
import gradc
import gradc.torch as torch

torch.manual_seed(0)
x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
loss.backward()
print(w.grad)
print(b.grad)

with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)


def tutorial_loss(x, y, w, b):
    """The same loss as a function, for the compiler (torch-style ops trace like NumPy ones)."""
    return torch.nn.functional.binary_cross_entropy_with_logits(torch.matmul(x, w) + b, y)


args = [t.detach().numpy().astype("float64") for t in (x, y, w, b)]
w_bar, b_bar = gradc.grad(tutorial_loss, wrt=("w", "b"))(*args)
print("compiled gradient agrees with backward():",
      bool(abs(w_bar - w.grad.numpy()).max() < 1e-6 and abs(b_bar - b.grad.numpy()).max() < 1e-6))
