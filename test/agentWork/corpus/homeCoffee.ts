/**
 * A small home-coffee blog (brewathome.example): twelve articles as the `articles` read model gives
 * them to the agents (plain text, headings as their own paragraphs, internal links listed).
 * Written to read like a real site, with the usual gaps: topics mentioned everywhere but never
 * given their own article (gooseneck kettle, kitchen scale, roast date), an old thin article, and
 * pages nobody links to.
 */
import type { ArticleInput } from '../../../src/domain/agentWork.ts';

export const SITE = 'https://brewathome.example';
const url = (slug: string) => `${SITE}/${slug}/`;

const article = (
  id: string,
  slug: string,
  title: string,
  publishedAt: string,
  updatedAt: string | null,
  links: string[],
  paragraphs: string[],
): ArticleInput => ({ id, url: url(slug), title, text: paragraphs.join('\n\n'), links: links.map(url), publishedAt, updatedAt });

export const ARTICLES: ArticleInput[] = [
  article('a01', 'dial-in-espresso', 'How to Dial In Espresso at Home', '2025-02-10T08:00:00Z', '2026-06-02T08:00:00Z', ['burr-grinder'], [
    'Pulling a good shot at home is mostly patience. Every new bag of beans behaves a little differently, and the only way to find its sweet spot is to dial in espresso one variable at a time.',
    'Start with the grind',
    'Grind size is the first thing to change and the last thing to blame. A consistent burr grinder matters more than the machine itself, because uneven grounds let water channel through the puck. Begin with 18 grams of coffee in the basket and aim for about 36 grams in the cup.',
    'Why does my espresso taste sour?',
    'A sour, thin shot that runs in under 20 seconds is under-extracted. Grind finer in small steps and keep the dose the same. If the shot turns bitter and drips slowly past 35 seconds, you have gone too far the other way.',
    'Brew ratio and timing',
    'Most people settle on a brew ratio between 1:2 and 1:2.5 for medium roasts. Lighter beans often taste better with a longer ratio, while darker beans can be pulled shorter. Weigh both the dose and the shot on a kitchen scale; counting seconds alone will mislead you.',
    'Keep notes on the roast date of each bag as well. Beans that are only three or four days past roasting release a lot of carbon dioxide and tend to spray and channel, so give them a week before you judge them.',
    'Once you can pull the same shot twice in a row, try milk drinks. Our guide to milk frothing covers steaming for lattes and cappuccinos.',
  ]),
  article('a02', 'burr-grinder', 'Choosing a Burr Grinder', '2024-11-03T08:00:00Z', '2026-03-15T08:00:00Z', [], [
    'If you change one piece of equipment this year, make it the grinder. A burr grinder crushes beans between two abrasive surfaces to a predictable size, while a blade grinder simply smashes them into dust and boulders.',
    'Conical or flat burrs?',
    'Conical burrs are quieter, cheaper to build and forgiving for most home brewers. Flat burrs produce a narrower particle distribution, which some people prefer for light roasts and clarity in the cup.',
    'Matching the grinder to your brewer',
    'For espresso you need fine, repeatable steps or a stepless adjustment. For a French press or cold brew, the grinder must also produce an even coarse grind without a cloud of fines, which many espresso-focused grinders struggle with.',
    'Pour over coffee sits in the middle. A medium grind with few fines keeps the drawdown steady and the cup sweet.',
    'Budget and maintenance',
    'Expect to spend at least as much on the grinder as on the brewer. Clean the burrs every month with a brush, and never wash them with water unless the manual says so. Store your beans in an airtight container next to the grinder rather than in its hopper.',
  ]),
  article('a03', 'french-press', 'French Press Brewing Guide', '2023-05-20T08:00:00Z', '2025-01-08T08:00:00Z', ['burr-grinder'], [
    'The French press is the most forgiving brewer in the kitchen. It needs no paper filter, no special kettle and very little technique, and it makes a heavy, rich cup.',
    'The basic method',
    'Use a coarse grind from a burr grinder, about the size of sea salt. Add 30 grams of coffee to 500 grams of water just off the boil and stir once so every ground is wet.',
    'Steep for four minutes, then break the crust, skim the foam and press the plunger slowly. Pour everything out straight away; coffee left on the grounds keeps extracting and turns bitter.',
    'Common mistakes',
    'A muddy cup usually means the grind is too fine. A weak cup often comes from a poor coffee to water ratio rather than from the beans, so weigh both before you blame the roaster.',
    'The same pot also makes an excellent cold brew concentrate overnight in the fridge.',
  ]),
  article('a04', 'cold-brew', 'Cold Brew Concentrate Recipe', '2024-06-12T08:00:00Z', '2024-06-12T08:00:00Z', [], [
    'Cold brew is coffee made with time instead of heat. Steeping coarse grounds in cold water for 14 to 18 hours gives a smooth, low-acid concentrate you can keep in the fridge for a week.',
    'What you need',
    'A large jar or a French press, a coarse grind and a kitchen scale. Use 100 grams of coffee to 500 grams of water for a concentrate, then dilute it one to one with water or milk when you serve it.',
    'Is cold brew stronger than hot coffee?',
    'Undiluted, yes. The concentrate carries roughly twice the caffeine of a regular cup, which is why the coffee to water ratio of the final drink matters more than the recipe itself.',
    'Filtering',
    'Strain the concentrate through a paper filter after the first pass through a mesh sieve. It takes longer, but the cup is cleaner and it keeps better.',
  ]),
  article('a05', 'pour-over', 'Pour Over Coffee for Beginners', '2024-09-01T08:00:00Z', '2026-01-20T08:00:00Z', ['coffee-to-water-ratio'], [
    'Pour over coffee rewards a little attention with a clean, bright cup. All you need is a dripper, a paper filter, a gooseneck kettle and a kitchen scale.',
    'Rinse and bloom',
    'Rinse the paper filter with hot water to remove its papery taste and warm the dripper. Add 15 grams of medium-fine coffee and pour about twice its weight in water to let it bloom for 30 to 45 seconds.',
    'Water temperature matters more than most beginners think. Aim for 92 to 96 degrees for light roasts and a little cooler for dark ones.',
    'The main pour',
    'Pour slowly in small circles with the gooseneck kettle until you reach 250 grams of water. The whole brew should finish in about three minutes; if it runs much longer, grind coarser.',
    'Once your technique is steady, play with the coffee to water ratio to make the cup stronger or lighter.',
  ]),
  article('a06', 'water-temperature', 'Water Temperature for Brewing Coffee', '2022-03-14T08:00:00Z', '2023-02-01T08:00:00Z', [], [
    'Hot water dissolves the flavours in ground coffee, and how hot it is decides which flavours come out first. Too cool and the cup tastes sour and flat; too hot and bitter compounds take over.',
    'The ideal range',
    'Most brewing guides settle on 90 to 96 degrees Celsius. Pour over coffee and espresso both sit at the upper end for light roasts, while a French press is happier a few degrees lower because the grounds stay in contact with the water for so long.',
    'Measuring without a thermometer',
    'Water that has just stopped boiling is around 96 degrees. Wait thirty seconds with the lid open for roughly 93. A gooseneck kettle with a built-in thermometer removes the guesswork.',
  ]),
  article('a07', 'storing-coffee-beans', 'Storing Coffee Beans to Keep Them Fresh', '2023-10-05T08:00:00Z', '2024-02-11T08:00:00Z', [], [
    'Freshly roasted beans lose their aroma quickly once the bag is open. Air, light, heat and moisture are the four enemies of flavour.',
    'Use an airtight container',
    'Move the beans into an airtight container with a one-way valve and keep it in a cool cupboard. Clear jars on the counter look pretty but let light in.',
    'Should you freeze coffee beans?',
    'Freezing works if you portion the beans into small sealed bags and only take out what you need for a week. Never return thawed beans to the freezer, because condensation ruins them.',
    'Check the roast date on every bag you buy. Beans taste best between one and four weeks after roasting, and grinding just before brewing with a burr grinder keeps most of that freshness in the cup.',
  ]),
  article('a08', 'roast-levels', 'Understanding Roast Levels', '2024-01-22T08:00:00Z', '2025-12-01T08:00:00Z', ['storing-coffee-beans'], [
    'Roasting turns a green seed into something worth brewing, and how far the roaster takes it shapes almost everything about the cup.',
    'Light, medium and dark roasts',
    'Light roasts keep the fruit and acidity of the origin and suit pour over coffee. Medium roasts balance sweetness and body and work in almost any brewer. Dark roasts taste of chocolate and smoke, and they are easier to pull as espresso but can turn ashy.',
    'Roast date and resting',
    'Look for the roast date rather than a best-before date. Light roasts often need a week or two of rest before they open up, while dark roasts peak sooner. Storing coffee beans properly stretches that window.',
  ]),
  article('a09', 'milk-frothing', 'Milk Frothing for Lattes and Cappuccinos', '2025-04-18T08:00:00Z', '2026-04-30T08:00:00Z', ['dial-in-espresso'], [
    'Good milk is half of a good latte. The aim is microfoam: milk that is glossy, sweet and full of bubbles too small to see.',
    'Stretch, then spin',
    'Start with cold milk and the steam wand tip just under the surface. Let it draw air for a few seconds until the jug feels lukewarm, then sink the tip and let the milk spin until it is hot to touch, around 60 degrees.',
    'Lattes versus cappuccinos',
    'A cappuccino takes more foam and less milk than a latte. Both start with a well-made shot, so it pays to dial in espresso before you worry about latte art.',
    'Oat milk froths well if you buy a barista edition, which contains a little added fat.',
  ]),
  article('a10', 'descaling-espresso-machine', 'Descaling Your Espresso Machine', '2021-08-30T08:00:00Z', null, [], [
    'Scale builds up inside every espresso machine that runs on hard water. Descale every two to three months with a citric acid solution, run plain water through the boiler twice, and your machine will last for years.',
  ]),
  article('a11', 'aeropress', 'AeroPress Recipes for One Cup', '2025-07-07T08:00:00Z', '2025-07-07T08:00:00Z', ['pour-over'], [
    'The AeroPress is the travel mug of brewers: light, nearly unbreakable and quick to clean. It sits somewhere between a French press and pour over coffee, and it makes one excellent cup at a time.',
    'The standard recipe',
    'Put a paper filter in the cap and rinse it. Add 15 grams of medium-fine coffee and 220 grams of water at about 85 degrees, stir for ten seconds, wait a minute and press gently for thirty seconds.',
    'The inverted method',
    'Flip the AeroPress upside down so nothing drips before you press. It gives you full control over steeping time, a bit like a French press, but with a much cleaner cup.',
    'If the cup tastes hollow, check your coffee to water ratio before changing anything else.',
  ]),
  article('a12', 'coffee-to-water-ratio', 'Coffee to Water Ratio Explained', '2024-03-03T08:00:00Z', '2026-02-14T08:00:00Z', ['pour-over', 'french-press'], [
    'The coffee to water ratio is the single number that decides how strong your cup is. Everything else, from grind size to water temperature, changes how well that coffee extracts.',
    'Start at 1:16',
    'For pour over coffee and drip brewers, 1 gram of coffee to 16 grams of water is a sensible starting point. A French press likes a slightly stronger 1:15, while cold brew concentrate goes as strong as 1:5.',
    'Why weigh instead of scoop?',
    'Scoops measure volume, and a dark roast is much lighter per scoop than a light roast. A kitchen scale that reads to a tenth of a gram costs less than a bag of good beans and removes the guesswork. Pair it with a gooseneck kettle and every pour becomes repeatable.',
  ]),
];

export const byId = (id: string): ArticleInput => {
  const a = ARTICLES.find((x) => x.id === id);
  if (!a) throw new Error(`no article ${id}`);
  return a;
};
